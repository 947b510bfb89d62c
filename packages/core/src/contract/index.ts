export * from './common';
export * from './limits';
export * from './participants';
export * from './spaces';
export * from './views';
