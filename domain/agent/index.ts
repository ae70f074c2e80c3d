export * from './record.ts';
export * from './events.ts';
export * from './state.ts';
export * from './decide.ts';
export * from './seats.ts';
