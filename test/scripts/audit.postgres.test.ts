import t from 'tap';
import { auditSuite } from './audit-suite.ts';

auditSuite(t, 'postgres');
