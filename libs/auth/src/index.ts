export * from './access-token.secret';
export * from './password.hash';
export * from './secret-box';
export * from './identifiers';
export * from './secret-box.module';
export * from './oauth-tokens';
