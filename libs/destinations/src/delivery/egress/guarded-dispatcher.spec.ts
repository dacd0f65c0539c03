import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EgressGuard, type HostResolver, isEgressDenied } from './egress-guard';
import { parseEgressPolicy } from './egress-policy';
import { GuardedDispatcher, type GuardedRequestHandler } from './guarded-dispatcher';

const loopbackResolver: HostResolver = async () => [{ address: '127.0.0.1', family: 4 }];

/** Sends a GET and answers its status and body, or the error undici reported. */
function get(dispatcher: GuardedDispatcher, origin: string): Promise<{ status?: number; error?: Error }> {
  return new Promise((resolve) => {
    let status = 0;
    const handler: GuardedRequestHandler = {
      onRequestStart() {},
      onResponseStart(_controller, statusCode) {
        status = statusCode;
      },
      onResponseData() {},
      onResponseEnd: () => resolve({ status }),
      onResponseError: (_controller, error) => resolve({ error }),
    };
    dispatcher.dispatch({ origin, path: '/', method: 'GET' }, handler);
  });
}

describe('GuardedDispatcher', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer((_request, response) => response.end('internal answer'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('refuses an IP literal the policy refuses before any socket is made', async () => {
    const dispatcher = new GuardedDispatcher(new EgressGuard(parseEgressPolicy('open', undefined)), {
      timeoutMs: 1_000,
    });
    try {
      const { error } = await get(dispatcher, 'http://169.254.169.254');
      expect(isEgressDenied(error)).toBe(true);
    } finally {
      await dispatcher.close();
    }
  });

  it('resolves names through the guard, and refuses a name that resolves to a refused address', async () => {
    const guard = new EgressGuard(parseEgressPolicy('public', undefined), loopbackResolver);
    const dispatcher = new GuardedDispatcher(guard, { timeoutMs: 1_000 });
    try {
      const { error } = await get(dispatcher, `http://hooks.example:${port}`);
      expect(isEgressDenied(error)).toBe(true);
    } finally {
      await dispatcher.close();
    }
  });

  it('hides the answers of a name that connected to a loopback address, and shows allow-listed ones', async () => {
    const open = new GuardedDispatcher(
      new EgressGuard(parseEgressPolicy('open', undefined), loopbackResolver),
      {
        timeoutMs: 1_000,
      },
    );
    const vouched = new GuardedDispatcher(
      new EgressGuard(parseEgressPolicy('open', '127.0.0.1'), loopbackResolver),
      { timeoutMs: 1_000 },
    );
    try {
      expect(await get(open, `http://hooks.example:${port}`)).toEqual({ status: 200 });
      expect(open.mayShowResponseOf('hooks.example')).toBe(false);
      expect(open.mayShowResponseOf('HOOKS.example')).toBe(false);
      expect(await get(vouched, `http://hooks.example:${port}`)).toEqual({ status: 200 });
      expect(vouched.mayShowResponseOf('hooks.example')).toBe(true);
    } finally {
      await Promise.all([open.close(), vouched.close()]);
    }
  });

  it('keeps working after close(), on new connections', async () => {
    const dispatcher = new GuardedDispatcher(new EgressGuard(parseEgressPolicy('open', undefined)), {
      timeoutMs: 1_000,
    });
    expect(await get(dispatcher, `http://127.0.0.1:${port}`)).toEqual({ status: 200 });
    await dispatcher.close();
    expect(await get(dispatcher, `http://127.0.0.1:${port}`)).toEqual({ status: 200 });
    await dispatcher.close();
  });
});
