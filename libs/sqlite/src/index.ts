export * from './sqlite-database';
