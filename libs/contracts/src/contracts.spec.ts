import { CONTRACTS_VERSION } from '@tributary/contracts';
it('loads through its alias', () => expect(CONTRACTS_VERSION).toBe(1));
