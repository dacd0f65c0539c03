// TRUST_PROXY decides whose X-Forwarded-* headers make request.ip (every rate limit and a browser
// event's context.ip read it), request.protocol and request.hostname; checked over real loopback HTTP.
import { Controller, Get, Module, Req } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { PassThrough } from 'node:stream';
import { httpApplicationOptionsOf, loadEnvironment } from '../environment';
import { createHttpApplication } from './http-server';

@Controller('whoami')
class WhoAmIController {
  @Get()
  whoAmI(@Req() request: FastifyRequest) {
    return { ip: request.ip, protocol: request.protocol, hostname: request.hostname };
  }
}

@Module({ controllers: [WhoAmIController] })
class WhoAmIModule {}

describe('TRUST_PROXY and request.ip', () => {
  const apps: NestFastifyApplication[] = [];

  async function whoAmI(trustProxy: string | undefined, headers: Record<string, string>) {
    const environment = loadEnvironment(trustProxy === undefined ? {} : { TRUST_PROXY: trustProxy });
    const { trustProxy: trusted } = httpApplicationOptionsOf(environment);
    const app = await createHttpApplication(WhoAmIModule, 'error', {
      trustProxy: trusted,
      logDestination: new PassThrough().resume(),
    });
    apps.push(app);
    await app.listen(0, '127.0.0.1');
    const port = (app.getHttpServer().address() as { port: number }).port;
    const response = await fetch(`http://127.0.0.1:${port}/whoami`, { headers });
    return (await response.json()) as { ip: string; protocol: string; hostname: string };
  }

  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });

  const forwarded = {
    'x-forwarded-for': '198.51.100.1, 203.0.113.7',
    'x-forwarded-proto': 'https',
    'x-forwarded-host': 'tracking.example.com',
  };

  it.each([
    ['unset', undefined],
    ['false', 'false'],
    ['a CIDR the peer is not in', '10.0.0.0/8, 192.168.0.0/16'],
  ])('%s: believes no header, the address is the TCP peer', async (_label, setting) => {
    const seen = await whoAmI(setting, forwarded);
    expect(seen.ip).toBe('127.0.0.1');
    expect(seen.protocol).toBe('http');
    expect(seen.hostname).not.toBe('tracking.example.com');
  });

  it.each([
    ['loopback', 'loopback', '203.0.113.7'],
    ['the peer by CIDR', '127.0.0.0/8', '203.0.113.7'],
    ['the peer and the next hop', '127.0.0.1, 203.0.113.0/24', '198.51.100.1'],
    ['one hop', '1', '203.0.113.7'],
    ['two hops', '2', '198.51.100.1'],
    ['every hop', 'true', '198.51.100.1'],
  ])('%s (%s): the client is %s', async (_label, setting, client) => {
    const seen = await whoAmI(setting, forwarded);
    expect(seen.ip).toBe(client);
    expect(seen.protocol).toBe('https');
  });
});

describe('TRUST_PROXY parsing', () => {
  it.each<[string, unknown]>([
    ['', false],
    ['false', false],
    ['true', true],
    ['2', 2],
    ['loopback', ['loopback']],
    ['10.0.0.0/8, 172.16.0.0/12 ,::1, fd00::/8', ['10.0.0.0/8', '172.16.0.0/12', '::1', 'fd00::/8']],
  ])('reads %j', (setting, expected) => {
    expect(loadEnvironment({ TRUST_PROXY: setting }).TRUST_PROXY).toEqual(expected);
  });

  it.each(['yes', '10.0.0.0/33', '::1/129', '10.0.0.0/8,', 'proxy.internal', '10.0.0.1/8/1', '1000'])(
    'refuses %j, naming the variable',
    (setting) => {
      expect(() => loadEnvironment({ TRUST_PROXY: setting })).toThrow(/TRUST_PROXY/);
    },
  );
});
