// Loaded first in every test process (.taprc `node-arg`): what holds for the tests alone.
import { freezeParsedEvents } from '../../domain/shared/parse-once.ts';

// The parse of an event shared by the read models (domain/shared/parse-once.ts) is frozen: a read model changing it throws.
freezeParsedEvents();
