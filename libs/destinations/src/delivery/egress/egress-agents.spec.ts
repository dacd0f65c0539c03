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

  function fetchText(url: string, agents: ReturnType<typeof createEgressAgents>): Promise<string> {
    return new Promise((resolve, reject) => {
      get(url, { agent: agents.forUrl(new URL(url)) }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve(body));
      }).on('error', reject);
    });
  }

  it('refuses an IP literal the policy denies before connecting, with the guard error', async () => {
    const agents = createEgressAgents(new EgressGuard(parseEgressPolicy('public', '')));
    try {
      await expect(fetchText(`http://127.0.0.1:${port}/`, agents)).rejects.toMatchObject({
        code: 'EGRESS_DENIED',
      });
    } finally {
      agents.destroy();
    }
  });

  it('resolves names through the guard and sends mapped ports to their replacement', async () => {
    const agents = createEgressAgents(
      new EgressGuard(undefined, async () => [{ address: '127.0.0.1', family: 4 }]),
      { portMap: { 80: port } },
    );
    try {
      await expect(fetchText('http://vendor.example/', agents)).resolves.toBe('ok');
    } finally {
      agents.destroy();
    }
  });

  it('refuses a name that resolves to a denied address', async () => {
    const agents = createEgressAgents(
      new EgressGuard(parseEgressPolicy('public', ''), async () => [{ address: '10.0.0.5', family: 4 }]),
    );
    try {
      await expect(fetchText('http://internal.example/', agents)).rejects.toMatchObject({
        code: 'EGRESS_DENIED',
      });
    } finally {
      agents.destroy();
    }
  });
});
