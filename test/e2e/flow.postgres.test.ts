import t from 'tap';
import { flowSuite } from './flow.ts';

flowSuite(t, 'postgres');
