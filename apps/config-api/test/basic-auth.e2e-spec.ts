// HTTP Basic (email:password) on /v1beta/access-tokens, as an attacker would try it: guessing
// passwords (rate limits per email and per client address), probing which emails have an account
// (timing), and flooding the route with hashes to compute (bounded concurrency).
import { ConfigApiClient } from '../../../test/support/config-api.client';
import { startTributary, type TributaryTestInstance } from '../../../test/support/tributary-test-instance';

jest.setTimeout(120_000);

const ADMIN_EMAIL = 'owner@tributary.example';
const ADMIN_PASSWORD = 'correct horse battery staple';

function basic(email: string, password: string): string {
  return `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`;
}

interface Answer {
  status: number;
  retryAfter: string | null;
  body: any;
  elapsedMs: number;
}

async function listTokens(
  t: TributaryTestInstance,
  authorization: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const started = performance.now();
  const response = await new ConfigApiClient(t, null).get('access-tokens', {
    headers: { ...headers, authorization },
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: response.body,
    elapsedMs: performance.now() - started,
  };
}

function expectRefusal(answer: Answer, status: number, code: number): void {
  expect({ status: answer.status, code: answer.body.code }).toEqual({ status, code });
  // The Config API's error shape.
  expect(answer.body).toMatchObject({ error: expect.any(String), code });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function startWith(environment: Record<string, string>): Promise<TributaryTestInstance> {
  return startTributary({
    environment: {
      TRIBUTARY_ADMIN_EMAIL: ADMIN_EMAIL,
      TRIBUTARY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      ...environment,
    },
  });
}

describe('Basic auth rate limits', () => {
  let t: TributaryTestInstance;

  afterEach(async () => {
    await t?.stop({ removeData: true });
  });

  it('limits attempts per email: 429 code 8 with Retry-After, even for the right password; tokens unaffected', async () => {
    t = await startWith({ BASIC_AUTH_RATE_LIMIT_PER_EMAIL: '3', BASIC_AUTH_RATE_LIMIT_PER_ADDRESS: '100' });
    for (let attempt = 0; attempt < 3; attempt++) {
      expectRefusal(await listTokens(t, basic(ADMIN_EMAIL, `guess-${attempt}`)), 401, 16);
    }
    // The email is counted case-insensitively, as it is looked up.
    const limited = await listTokens(t, basic(ADMIN_EMAIL.toUpperCase(), ADMIN_PASSWORD));
    expectRefusal(limited, 429, 8);
    expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(60);
    // Another email from the same address is still checked.
    expectRefusal(await listTokens(t, basic('someone@tributary.example', 'x')), 401, 16);
    // An access token is not a password attempt.
    expect((await listTokens(t, `Bearer ${t.adminToken}`)).status).toBe(200);
  });

  it('limits attempts per client address across emails', async () => {
    t = await startWith({ BASIC_AUTH_RATE_LIMIT_PER_EMAIL: '100', BASIC_AUTH_RATE_LIMIT_PER_ADDRESS: '4' });
    for (let attempt = 0; attempt < 4; attempt++) {
      expectRefusal(await listTokens(t, basic(`user-${attempt}@tributary.example`, 'guess')), 401, 16);
    }
    const limited = await listTokens(t, basic(ADMIN_EMAIL, ADMIN_PASSWORD));
    expectRefusal(limited, 429, 8);
    expect(limited.retryAfter).toMatch(/^\d+$/);
    expect((await listTokens(t, `Bearer ${t.adminToken}`)).status).toBe(200);
  });

  it('lets the right password in while under the limits', async () => {
    t = await startWith({});
    expect((await listTokens(t, basic(ADMIN_EMAIL, ADMIN_PASSWORD))).status).toBe(200);
  });
});

describe('Basic auth rate limits behind a proxy (TRUST_PROXY)', () => {
  let t: TributaryTestInstance;

  afterEach(async () => {
    await t?.stop({ removeData: true });
  });

  const from = (client: string) => ({ 'x-forwarded-for': client });

  it('believes no X-Forwarded-For when unset: a caller cannot pick a fresh address per attempt', async () => {
    t = await startWith({ BASIC_AUTH_RATE_LIMIT_PER_EMAIL: '100', BASIC_AUTH_RATE_LIMIT_PER_ADDRESS: '2' });
    expectRefusal(await listTokens(t, basic('a@tributary.example', 'x'), from('198.51.100.1')), 401, 16);
    expectRefusal(await listTokens(t, basic('b@tributary.example', 'x'), from('198.51.100.2')), 401, 16);
    expectRefusal(await listTokens(t, basic('c@tributary.example', 'x'), from('198.51.100.3')), 429, 8);
  });

  it("counts each client behind a trusted proxy on its own: the proxy's clients do not share one budget", async () => {
    t = await startWith({
      BASIC_AUTH_RATE_LIMIT_PER_EMAIL: '100',
      BASIC_AUTH_RATE_LIMIT_PER_ADDRESS: '2',
      TRUST_PROXY: 'loopback',
    });
    expectRefusal(await listTokens(t, basic('a@tributary.example', 'x'), from('198.51.100.1')), 401, 16);
    expectRefusal(await listTokens(t, basic('b@tributary.example', 'x'), from('198.51.100.1')), 401, 16);
    expectRefusal(await listTokens(t, basic('c@tributary.example', 'x'), from('198.51.100.1')), 429, 8);
    // Another client of the same proxy still has its attempts.
    expectRefusal(await listTokens(t, basic('d@tributary.example', 'x'), from('203.0.113.9')), 401, 16);
    expect((await listTokens(t, basic(ADMIN_EMAIL, ADMIN_PASSWORD), from('203.0.113.9'))).status).toBe(200);
  });
});

describe('Basic auth timing', () => {
  let t: TributaryTestInstance;

  beforeAll(async () => {
    t = await startWith({
      BASIC_AUTH_RATE_LIMIT_PER_EMAIL: '1000',
      BASIC_AUTH_RATE_LIMIT_PER_ADDRESS: '1000',
    });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('takes as long for an unknown email as for a known one with a wrong password', async () => {
    const known: number[] = [];
    const unknown: number[] = [];
    // Interleaved, so load on the machine falls on both alike.
    for (let round = 0; round < 7; round++) {
      const wrongPassword = await listTokens(t, basic(ADMIN_EMAIL, `wrong-${round}`));
      const noAccount = await listTokens(t, basic(`nobody-${round}@tributary.example`, `wrong-${round}`));
      expectRefusal(wrongPassword, 401, 16);
      expectRefusal(noAccount, 401, 16);
      // The same answer either way: nothing in the body tells the cases apart.
      expect(noAccount.body).toEqual(wrongPassword.body);
      known.push(wrongPassword.elapsedMs);
      unknown.push(noAccount.elapsedMs);
    }
    // Without a dummy hash an unknown email is answered in a millisecond or two, a scrypt check in
    // tens of milliseconds; with it, both cost one scrypt.
    expect(median(unknown)).toBeGreaterThan(median(known) * 0.5);
    expect(median(known)).toBeGreaterThan(median(unknown) * 0.5);
  });
});

describe('Basic auth hashing concurrency', () => {
  let t: TributaryTestInstance;

  beforeAll(async () => {
    t = await startWith({
      PASSWORD_HASH_CONCURRENCY: '1',
      BASIC_AUTH_RATE_LIMIT_PER_EMAIL: '1000',
      BASIC_AUTH_RATE_LIMIT_PER_ADDRESS: '1000',
    });
  });

  afterAll(async () => {
    await t?.stop({ removeData: true });
  });

  it('refuses checks beyond the bound with 503 code 14 and Retry-After, never a 5xx of another kind', async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, index) => listTokens(t, basic(`flood-${index}@tributary.example`, 'x'))),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.every((status) => status === 401 || status === 503)).toBe(true);
    // One running and one waiting are checked; the others are refused at once.
    expect(statuses.filter((status) => status === 401).length).toBeGreaterThanOrEqual(2);
    const refused = answers.filter((answer) => answer.status === 503);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const answer of refused) {
      expectRefusal(answer, 503, 14);
      expect(answer.retryAfter).toBe('1');
    }
    // Once the flood has passed, the owner gets in.
    expect((await listTokens(t, basic(ADMIN_EMAIL, ADMIN_PASSWORD))).status).toBe(200);
  });
});
