import { CONTRACTS_VERSION } from '@tributary/contracts';
console.log('hello', CONTRACTS_VERSION);
