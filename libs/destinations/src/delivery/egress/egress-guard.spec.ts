import { createServer, request as httpRequest, Agent, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { EgressDeniedError, EgressGuard, type HostResolver, type ResolvedAddress } from './egress-guard';
import { parseEgressPolicy } from './egress-policy';

/** A real HTTP server on a loopback address that counts what it receives. */
class LoopbackServer {
  requests = 0;
  private readonly server: Server = createServer((request, response) => {
    this.requests++;
    request.resume();
    response.end('reached');
  });

  async listen(host: string, port = 0): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve());
    });
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** GET through an agent whose lookup is the guard's; answers the body or the error. */
function getThrough(guard: EgressGuard, url: string): Promise<{ body?: string; error?: unknown }> {
  const agent = new Agent({ lookup: guard.lookup });
  return new Promise((resolve) => {
    const request = httpRequest(url, { agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        agent.destroy();
        resolve({ body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    request.on('error', (error) => {
      agent.destroy();
      resolve({ error });
    });
    request.end();
  });
}

/** A resolver with fixed answers per call, counting calls. */
function scriptedResolver(...answers: ResolvedAddress[][]): HostResolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostName: string) => {
    calls.push(hostName);
    return answers[Math.min(calls.length - 1, answers.length - 1)]!;
  };
  return Object.assign(resolver, { calls });
}

describe('EgressGuard against real loopback servers', () => {
  const server = new LoopbackServer();
  let port = 0;

  beforeAll(async () => {
    port = await server.listen('127.0.0.1');
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests = 0;
  });

  it('lets a request to localhost through under open (the default)', async () => {
    const result = await getThrough(new EgressGuard(), `http://localhost:${port}/`);
    expect(result.body).toBe('reached');
    expect(server.requests).toBe(1);
  });

  it('refuses localhost and 127.0.0.1 under public before any connection is made', async () => {
    const guard = new EgressGuard(parseEgressPolicy('public', undefined));
    const byName = await getThrough(guard, `http://localhost:${port}/`);
    expect(byName.error).toBeInstanceOf(EgressDeniedError);
    expect((byName.error as EgressDeniedError).detail).toMatch(/loopback .*TRIBUTARY_EGRESS=public/);
    await expect(guard.resolve('127.0.0.1')).rejects.toBeInstanceOf(EgressDeniedError);
    await expect(guard.resolve('[::1]')).rejects.toBeInstanceOf(EgressDeniedError);
    expect(guard.refusalOfLiteral('127.0.0.1')).toBeInstanceOf(EgressDeniedError);
    expect(server.requests).toBe(0);
  });

  it('lets allow-listed names and CIDRs through under public', async () => {
    const byName = new EgressGuard(parseEgressPolicy('public', 'localhost'));
    expect((await getThrough(byName, `http://localhost:${port}/`)).body).toBe('reached');
    // Resolved by a fixed answer: some hosts map localhost to ::1 as well, which no CIDR here covers.
    const loopbackResolver = scriptedResolver([{ address: '127.0.0.1', family: 4 }]);
    const byCidr = new EgressGuard(parseEgressPolicy('public', '127.0.0.0/30'), loopbackResolver);
    expect((await getThrough(byCidr, `http://hooks.example:${port}/`)).body).toBe('reached');
    expect(byCidr.refusalOfLiteral('127.0.0.1')).toBeUndefined();
    const other = new EgressGuard(parseEgressPolicy('public', '127.0.0.8/30,warehouse'), loopbackResolver);
    expect((await getThrough(other, `http://hooks.example:${port}/`)).error).toBeInstanceOf(
      EgressDeniedError,
    );
    expect(server.requests).toBe(2);
  });

  it('refuses the metadata address under open, by name and as a literal', async () => {
    const resolver = scriptedResolver([{ address: '169.254.169.254', family: 4 }]);
    const guard = new EgressGuard(parseEgressPolicy('open', undefined), resolver);
    await expect(guard.resolve('metadata.google.internal')).rejects.toThrow(/link-local/);
    expect(guard.refusalOfLiteral('169.254.169.254')).toBeInstanceOf(EgressDeniedError);
    expect(guard.refusalOfLiteral('[::ffff:169.254.169.254]')).toBeInstanceOf(EgressDeniedError);
    expect(guard.refusalOfLiteral('[fd00:ec2::254]')).toBeInstanceOf(EgressDeniedError);
  });

  it('refuses a name when any of its addresses is refused, even if another is public', async () => {
    const resolver = scriptedResolver([
      { address: '93.184.216.34', family: 4 },
      { address: '::ffff:10.0.0.1', family: 6 },
    ]);
    const guard = new EgressGuard(parseEgressPolicy('public', undefined), resolver);
    await expect(guard.resolve('mixed.example')).rejects.toThrow(/10\.0\.0\.1 is in private/);
  });

  it('connects to the address it checked, not to what a second lookup would answer (DNS rebinding)', async () => {
    // 127.0.0.2 is allow-listed and serves; 127.0.0.1 on the same port is refused under public and
    // would count a request if the connection resolved the name again.
    const checked = new LoopbackServer();
    const checkedPort = await checked.listen('127.0.0.2');
    const rebound = new LoopbackServer();
    await rebound.listen('127.0.0.1', checkedPort);
    try {
      const resolver = scriptedResolver(
        [{ address: '127.0.0.2', family: 4 }],
        [{ address: '127.0.0.1', family: 4 }],
      );
      const guard = new EgressGuard(parseEgressPolicy('public', '127.0.0.2/32'), resolver);
      const result = await getThrough(guard, `http://rebinding.example:${checkedPort}/`);
      expect(result.body).toBe('reached');
      expect(checked.requests).toBe(1);
      expect(rebound.requests).toBe(0);
      expect(resolver.calls).toEqual(['rebinding.example']);
    } finally {
      await checked.close();
      await rebound.close();
    }
  });

  it('serves net.connect with and without family autoselection, answering only checked addresses', async () => {
    const guard = new EgressGuard(parseEgressPolicy('open', undefined));
    for (const autoSelectFamily of [true, false]) {
      const remoteAddress = await new Promise<string | undefined>((resolve, reject) => {
        const socket = connect({
          host: 'localhost',
          port,
          lookup: guard.lookup,
          autoSelectFamily,
          family: 4,
        });
        socket.once('connect', () => {
          const address = socket.remoteAddress;
          socket.destroy();
          resolve(address);
        });
        socket.once('error', reject);
      });
      expect(remoteAddress).toBe('127.0.0.1');
    }
    const refusing = new EgressGuard(parseEgressPolicy('public', undefined));
    const error = await new Promise<unknown>((resolve) => {
      const socket = connect({ host: 'localhost', port, lookup: refusing.lookup });
      socket.once('error', resolve);
      socket.once('connect', () => resolve(undefined));
    });
    expect(error).toBeInstanceOf(EgressDeniedError);
  });

  it('tells whether a response may be shown: public and allow-listed yes, loopback and private no', () => {
    const guard = new EgressGuard(parseEgressPolicy('open', 'hooks.internal,10.9.0.0/16'));
    expect(guard.mayShowResponseOf('93.184.216.34', 'example.com')).toBe(true);
    expect(guard.mayShowResponseOf('127.0.0.1', 'localhost')).toBe(false);
    expect(guard.mayShowResponseOf('::ffff:192.168.1.1')).toBe(false);
    expect(guard.mayShowResponseOf('10.1.2.3', 'hooks.internal')).toBe(true);
    expect(guard.mayShowResponseOf('10.9.2.3')).toBe(true);
    expect(guard.mayShowResponseOf(undefined)).toBe(false);
  });
});
