import { createServer, get, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEgressAgents } from './egress-agents';
import { EgressGuard } from './egress-guard';
import { parseEgressPolicy } from './egress-policy';

describe('createEgressAgents', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    server = createServer((_request, response) => response.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  type Client = 'node:http agent' | 'undici dispatcher';

  /** A GET through one of the two clients the agents serve: both keep to the same guard. */
  function fetchText(
    url: string,
    agents: ReturnType<typeof createEgressAgents>,
    client: Client = 'node:http agent',
  ): Promise<string> {
    if (client === 'undici dispatcher') {
      const { origin, pathname } = new URL(url);
      return new Promise((resolve, reject) => {
        let body = '';
        agents.dispatcher.dispatch(
          { origin, path: pathname, method: 'GET' },
          {
            onRequestStart() {},
            onResponseStart() {},
            onResponseData: (_controller, chunk) => (body += chunk.toString()),
            onResponseEnd: () => resolve(body),
            onResponseError: (_controller, error) => reject(error),
          },
        );
      });
    }
    return new Promise((resolve, reject) => {
      get(url, { agent: agents.forUrl(new URL(url)) }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve(body));
      }).on('error', reject);
    });
  }

  const clients: Client[] = ['node:http agent', 'undici dispatcher'];

  it.each(clients)('refuses an IP literal the policy denies before connecting (%s)', async (client) => {
    const agents = createEgressAgents(new EgressGuard(parseEgressPolicy('public', '')));
    try {
      await expect(fetchText(`http://127.0.0.1:${port}/`, agents, client)).rejects.toMatchObject({
        code: 'EGRESS_DENIED',
      });
    } finally {
      agents.destroy();
    }
  });

  it.each(clients)('resolves names through the guard and sends mapped ports on (%s)', async (client) => {
    const agents = createEgressAgents(
      new EgressGuard(undefined, async () => [{ address: '127.0.0.1', family: 4 }]),
      { portMap: { 80: port } },
    );
    try {
      await expect(fetchText('http://vendor.example/', agents, client)).resolves.toBe('ok');
    } finally {
      agents.destroy();
    }
  });

  it.each(clients)('refuses a name that resolves to a denied address (%s)', async (client) => {
    const agents = createEgressAgents(
      new EgressGuard(parseEgressPolicy('public', ''), async () => [{ address: '10.0.0.5', family: 4 }]),
    );
    try {
      await expect(fetchText('http://internal.example/', agents, client)).rejects.toMatchObject({
        code: 'EGRESS_DENIED',
      });
    } finally {
      agents.destroy();
    }
  });

  it.each(clients)('hides the answers of a name that reached a loopback address (%s)', async (client) => {
    const agents = createEgressAgents(
      new EgressGuard(parseEgressPolicy('open', undefined), async () => [
        { address: '127.0.0.1', family: 4 },
      ]),
      { portMap: { 80: port } },
    );
    try {
      expect(agents.mayShowResponseOf('vendor.example')).toBe(true);
      await expect(fetchText('http://vendor.example/', agents, client)).resolves.toBe('ok');
      expect(agents.mayShowResponseOf('vendor.example')).toBe(false);
      expect(agents.mayShowResponseOf('other.example')).toBe(true);
    } finally {
      agents.destroy();
    }
  });
});
