import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createFunctionRunner,
  type BatchingFunctionRunner,
  type FunctionRunnerOptions,
} from './function-runner';
import type { FunctionEntry, FunctionKind, FunctionResult } from './function-runner.port';

// Real isolates in a real forked process; small limits keep it fast.
jest.setTimeout(60_000);

const LIMITS = { timeoutMs: 300, memoryMb: 32 };
let serial = 0;

function fn(code: string, kind: FunctionKind = 'DESTINATION', workspaceId = 'ws_a') {
  serial += 1;
  return { workspaceId, functionId: `dfn_${serial}`, version: 1, kind, code };
}

function call(
  version: ReturnType<typeof fn>,
  payload: unknown = { type: 'track', event: 'E', messageId: 'm-1', properties: {} },
  entry: FunctionEntry = 'onTrack',
  settings: Record<string, unknown> = {},
) {
  return { fn: version, entry, payload, settings, context: { invocationId: `i-${serial}` } };
}

describe('createFunctionRunner (isolated-vm in a child process)', () => {
  const runners: BatchingFunctionRunner[] = [];
  const runner = (options: FunctionRunnerOptions = {}) => {
    const made = createFunctionRunner({ ...LIMITS, ...options });
    runners.push(made);
    return made;
  };
  let subject: BatchingFunctionRunner;
  let server: Server;
  let port = 0;
  let hits = 0;
  beforeAll(async () => {
    subject = runner({ timeoutMs: 2_000 });
    server = createServer((request, response) => {
      hits += 1;
      if (request.url === '/redirect') {
        response.writeHead(302, { location: '/hello' }).end();
      } else if (request.url?.startsWith('/loop')) {
        response.writeHead(302, { location: `/loop${(request.url.length % 20) + 1}x` }).end();
      } else if (request.url === '/big') {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end(Buffer.alloc(6 * 1024 * 1024, 97));
      } else if (request.url === '/slow') {
        setTimeout(() => response.end('late'), 5_000).unref();
      } else {
        let body = '';
        request.on('data', (chunk) => (body += chunk));
        request.on('end', () =>
          response
            .writeHead(200, {
              'content-type': 'application/json',
              'x-seen': request.headers['x-api-key'] ?? '',
            })
            .end(JSON.stringify({ method: request.method, url: request.url, body })),
        );
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await Promise.all(runners.map((made) => made.close()));
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  describe('globals (§3)', () => {
    it('offers the WHATWG classes, text, base64, crypto and lodash, computed as Node computes them', async () => {
      const code = `async function onTrack(event) {
        const url = new URL('/a/b?x=1&y=two', 'https://example.com:8443');
        url.searchParams.append('z', 'a b');
        const headers = new Headers({ 'X-One': '1' }); headers.append('x-one', '2');
        const response = new Response('{"ok":true}', { status: 201 });
        return {
          href: url.href, host: url.host, origin: url.origin, z: url.searchParams.get('z'),
          form: new URLSearchParams({ a: '1', b: 'x y' }).toString(),
          header: headers.get('x-one'), status: response.status, ok: response.ok, json: await response.json(),
          b64: btoa('hello'), back: atob('aGVsbG8='),
          utf8: Array.from(new TextEncoder().encode('é€')), text: new TextDecoder().decode(new Uint8Array([0xe2, 0x82, 0xac])),
          sha256: crypto.createHash('sha256').update('abc').digest('hex'),
          md5: crypto.createHash('md5').update(new TextEncoder().encode('abc')).digest('base64'),
          hmac: crypto.createHmac('sha1', 'key').update('data').digest('hex'),
          uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()),
          random: crypto.getRandomValues(new Uint8Array(8)).length,
          lodash: _.chunk([1, 2, 3], 2), errors: [new RetryError('r') instanceof Error, new DropEvent('d').name],
        };
      }`;
      const result = await subject.invoke(call(fn(code)));
      const { createHash, createHmac } = await import('node:crypto');
      expect(result).toMatchObject({
        status: 'resolved',
        value: {
          href: 'https://example.com:8443/a/b?x=1&y=two&z=a+b',
          host: 'example.com:8443',
          origin: 'https://example.com:8443',
          z: 'a b',
          form: 'a=1&b=x+y',
          header: '1, 2',
          status: 201,
          ok: true,
          json: { ok: true },
          b64: 'aGVsbG8=',
          back: 'hello',
          utf8: [...Buffer.from('é€')],
          text: '€',
          sha256: createHash('sha256').update('abc').digest('hex'),
          md5: createHash('md5').update('abc').digest('base64'),
          hmac: createHmac('sha1', 'key').update('data').digest('hex'),
          uuid: true,
          random: 8,
          lodash: [[1, 2], [3]],
          errors: [true, 'DropEvent'],
        },
      });
    });

    it('captures console output like util.format, 100 lines of 4 KiB, then says how many were dropped', async () => {
      const code = `async function onTrack(event) {
        console.log('%s has %d items', 'cart', 3, { a: 1 });
        console.warn('x'.repeat(5000));
        for (let i = 0; i < 120; i++) console.info('line', i);
      }`;
      const result = await subject.invoke(call(fn(code)));
      expect(result.status).toBe('resolved');
      expect(result.logs[0]).toMatchObject({ level: 'log', message: 'cart has 3 items {"a":1}' });
      expect(result.logs[1]!.level).toBe('warn');
      expect(result.logs[1]!.message).toHaveLength(4096);
      expect(result.logs).toHaveLength(100);
      expect(result.logsDropped).toBe(22);
    });

    it('collects Segment calls of a source function; Segment.set throws EventNotSupported', async () => {
      const code = `async function onRequest(request, settings) {
        const body = await request.json();
        Segment.track({ event: 'Order Placed', userId: body.id, properties: { shop: request.headers.get('x-shop'), q: request.url.searchParams.get('q') } });
        Segment.identify({ userId: body.id, traits: { tag: settings.tag } });
        if (body.set) Segment.set({ collection: 'x', id: '1', properties: {} });
      }`;
      const version = fn(code, 'SOURCE');
      const request = (body: unknown) => ({
        method: 'POST',
        url: 'https://in.example/v1/fn?b=abc&q=7',
        headers: { 'x-shop': 'acme' },
        body: JSON.stringify(body),
      });
      await expect(
        subject.invoke(call(version, request({ id: 'u1' }), 'onRequest', { tag: 't' })),
      ).resolves.toMatchObject({
        status: 'resolved',
        emitted: [
          { type: 'track', event: 'Order Placed', userId: 'u1', properties: { shop: 'acme', q: '7' } },
          { type: 'identify', userId: 'u1', traits: { tag: 't' } },
        ],
      });
      await expect(
        subject.invoke(call(version, request({ id: 'u1', set: true }), 'onRequest')),
      ).resolves.toMatchObject({
        status: 'threw',
        name: 'EventNotSupported',
      });
      const destination = await subject.invoke(
        call(fn('async function onTrack() { return typeof Segment; }')),
      );
      expect(destination).toMatchObject({ status: 'resolved', value: 'undefined' });
    });

    it('caps emitted messages at 500', async () => {
      const code = `async function onRequest() { for (let i = 0; i < 501; i++) Segment.track({ event: 'e' + i }); }`;
      const request = { method: 'POST', url: 'https://in.example/', headers: {}, body: '' };
      await expect(subject.invoke(call(fn(code, 'SOURCE'), request, 'onRequest'))).resolves.toMatchObject({
        status: 'threw',
        name: 'ValidationError',
        message: 'more than 500 messages emitted',
      });
    });

    it('answers no_handler for a type the function does not handle, and the thrown class otherwise', async () => {
      const version = fn(
        `const onTrack = async (event) => { throw new RetryError('HTTP ' + event.properties.status); }`,
      );
      await expect(subject.invoke(call(version, { type: 'identify' }, 'onIdentify'))).resolves.toMatchObject({
        status: 'no_handler',
      });
      const result = await subject.invoke(call(version, { type: 'track', properties: { status: 503 } }));
      expect(result).toMatchObject({ status: 'threw', name: 'RetryError', message: 'HTTP 503' });
      expect(result.logs).toEqual([
        expect.objectContaining({ level: 'error', message: 'RetryError: HTTP 503' }),
      ]);
    });
  });

  describe('nothing of the host (§8.3)', () => {
    it.each([
      ['process', 'typeof process'],
      ['require', 'typeof require'],
      ['module', 'typeof module'],
      ['exports', 'typeof exports'],
      ['Buffer', 'typeof Buffer'],
      ['setTimeout', 'typeof setTimeout'],
      ['setInterval', 'typeof setInterval'],
    ])('%s is not defined', async (_, expression) => {
      await expect(
        subject.invoke(call(fn(`async function onTrack() { return ${expression}; }`))),
      ).resolves.toMatchObject({
        status: 'resolved',
        value: 'undefined',
      });
    });

    it('using them is a ReferenceError', async () => {
      await expect(
        subject.invoke(call(fn('async function onTrack() { return process.env; }'))),
      ).resolves.toMatchObject({
        status: 'threw',
        name: 'ReferenceError',
      });
    });

    it('no chain of constructors, Function or stack call sites reaches process or require', async () => {
      const code = `async function onTrack(event, settings) {
        const reach = (make) => { try { const got = make(); return got === undefined ? 'undefined' : typeof got.process + '/' + typeof got.require + '/' + typeof got.mainModule; } catch (e) { return e.name; } };
        const response = new Response('x');
        let sites = [];
        Error.prepareStackTrace = (error, callSites) => callSites;
        const stack = new Error('x').stack;
        Error.prepareStackTrace = undefined;
        if (Array.isArray(stack)) sites = stack.map((site) => { const self = site.getThis(); const fnc = site.getFunction(); return [typeof (self && self.process), fnc ? fnc.constructor.constructor('return typeof process')() : 'none']; });
        return {
          thisCtor: reach(() => this.constructor.constructor('return this')()),
          processCall: reach(() => ({ process: this.constructor.constructor('return process')() })),
          fn: reach(() => Function('return this')()),
          fetchCtor: reach(() => fetch.constructor('return this')()),
          eventCtor: reach(() => event.constructor.constructor('return this')()),
          settingsCtor: reach(() => settings.constructor.constructor('return this')()),
          responseCtor: reach(() => response.constructor.constructor('return this')()),
          errorCtor: reach(() => new TypeError('x').constructor.constructor('return this')()),
          sites,
          dynamicImport: await import('node:fs').then(() => 'loaded', (e) => 'rejected'),
        };
      }`;
      const result = await subject.invoke(call(fn(code)));
      expect(result.status).toBe('resolved');
      const value = (result as { value: Record<string, unknown> }).value;
      for (const key of [
        'thisCtor',
        'fn',
        'fetchCtor',
        'eventCtor',
        'settingsCtor',
        'responseCtor',
        'errorCtor',
      ]) {
        expect([key, value[key]]).toEqual([key, 'undefined/undefined/undefined']);
      }
      expect(value.processCall).toBe('ReferenceError');
      for (const site of value.sites as string[][])
        expect(site).toEqual(['undefined', expect.stringMatching(/^(undefined|none)$/)]);
      expect(value.dynamicImport).toBe('rejected');
    });

    it("keeps one function's prototype tampering from other functions and other workspaces", async () => {
      const tamper = fn(
        `Object.prototype.x = 1; Array.prototype.push = () => 0; async function onTrack() { return ({}).x; }`,
      );
      await expect(subject.invoke(call(tamper))).resolves.toMatchObject({ status: 'resolved', value: 1 });
      const probe = `async function onTrack() { const a = []; a.push(1); return [({}).x === undefined, a.length]; }`;
      await expect(subject.invoke(call(fn(probe, 'DESTINATION', 'ws_a')))).resolves.toMatchObject({
        value: [true, 1],
      });
      await expect(subject.invoke(call(fn(probe, 'DESTINATION', 'ws_b')))).resolves.toMatchObject({
        value: [true, 1],
      });
      // The same function id and version in another workspace is another isolate.
      const sameIds = { ...tamper, workspaceId: 'ws_b', code: probe };
      await expect(subject.invoke(call(sameIds))).resolves.toMatchObject({ value: [true, 1] });
    });

    it('reads what a function made of its own serializing as its failure, never as another result', async () => {
      // The report is serialized in the isolate, where the code can change how objects serialize.
      const forged = await subject.invoke(
        call(
          fn(
            `Object.prototype.toJSON = function () { return { status: 'resolved', logs: 'none' }; };
             async function onTrack(event) { return event; }`,
          ),
        ),
      );
      expect(forged).toMatchObject({ status: 'threw', name: 'TypeError' });
      const text = await subject.invoke(
        call(fn(`JSON.stringify = () => 'not json'; async function onTrack(event) { return event; }`)),
      );
      // The runtime's own serializer was taken before the code ran.
      expect(text).toMatchObject({ status: 'resolved', value: { event: 'E' } });
    });

    it('sends a payload given as JSON text as it is, and answers the same as for the object', async () => {
      const version = fn('async function onTrack(event) { return [event.event, event.properties]; }');
      const payload = { type: 'track', event: 'E', properties: { zoë: 'ß', n: 1.5 } };
      const [fromText, fromObject] = await subject.invokeAll([
        { ...call(version, payload), payloadJson: JSON.stringify(payload) },
        call(version, payload),
      ]);
      expect(fromText).toMatchObject({ status: 'resolved', value: ['E', { zoë: 'ß', n: 1.5 }] });
      expect(fromObject).toMatchObject({ status: 'resolved', value: ['E', { zoë: 'ß', n: 1.5 }] });
    });

    it('passes event and settings as copies: what the function changes stays in the sandbox', async () => {
      const payload = { type: 'track', event: 'E', properties: { a: 1 } };
      const settings = { key: 'k' };
      const result = await subject.invoke(
        call(
          fn('async function onTrack(e, s) { e.properties.a = 2; s.key = "changed"; return [e, s]; }'),
          payload,
          'onTrack',
          settings,
        ),
      );
      expect(result).toMatchObject({ value: [{ properties: { a: 2 } }, { key: 'changed' }] });
      expect(payload.properties.a).toBe(1);
      expect(settings.key).toBe('k');
    });
  });

  describe('limits (§6)', () => {
    it('ends a busy loop within its time, while another function keeps answering', async () => {
      const fast = runner();
      const busy = fn('async function onTrack() { for (;;); }');
      const quick = fn('async function onTrack(e) { return e.messageId; }');
      await fast.invoke(call(quick));
      await fast.invoke(call(fn('async function onTrack() {}')));
      const begun = Date.now();
      const looping = fast.invoke(call(busy));
      const meanwhile: FunctionResult[] = [];
      for (let index = 0; index < 5; index++) meanwhile.push(await fast.invoke(call(quick)));
      const result = await looping;
      const took = Date.now() - begun;
      expect(result).toMatchObject({ status: 'timeout', limitMs: 300 });
      expect(took).toBeLessThan(300 + 1_500);
      expect(meanwhile.map((each) => each.status)).toEqual(Array(5).fill('resolved'));
      // The version is rebuilt for the next invocation.
      await expect(fast.invoke(call({ ...busy }))).resolves.toMatchObject({ status: 'timeout' });
    });

    it('ends a memory bomb within its limit, the isolate is rebuilt, and another function keeps answering', async () => {
      const roomy = runner({ timeoutMs: 3_000, memoryMb: 32 });
      const bomb = fn(
        `async function onTrack(e) { if (e.safe) return 'ok'; const kept = []; for (;;) kept.push('x'.repeat(1 << 20) + kept.length); }`,
      );
      const quick = fn('async function onTrack(e) { return 1; }');
      await roomy.invoke(call(quick));
      const begun = Date.now();
      const exploding = roomy.invoke(call(bomb));
      const meanwhile = await roomy.invoke(call(quick));
      const result = await exploding;
      expect(result).toMatchObject({ status: 'memory_exceeded', limitMb: 32 });
      expect(Date.now() - begun).toBeLessThan(3_000);
      expect(meanwhile.status).toBe('resolved');
      await expect(roomy.invoke(call(bomb, { safe: true }))).resolves.toMatchObject({
        status: 'resolved',
        value: 'ok',
      });
    });

    it('answers unavailable for invocations queued behind one that ended the isolate, and keeps earlier results', async () => {
      const version = fn('async function onTrack(e) { if (e.spin) for (;;); return e.n; }');
      const results = await subject.invokeAll([
        call(version, { n: 1 }),
        call(version, { spin: true }),
        call(version, { n: 3 }),
      ]);
      expect(results.map((result) => result.status)).toEqual(['resolved', 'timeout', 'unavailable']);
      expect(results[0]).toMatchObject({ value: 1 });
    });

    it('keeps top-level statements under the same limits', async () => {
      await expect(subject.invoke(call(fn('for (;;); async function onTrack() {}')))).resolves.toMatchObject({
        status: 'timeout',
      });
      await expect(subject.invoke(call(fn('null.x; async function onTrack() {}')))).resolves.toMatchObject({
        status: 'threw',
        name: 'TypeError',
      });
    });
  });

  describe('what the function resolved to', () => {
    it('gives back the payload itself for a message returned as its JSON came, and reads one changed', async () => {
      const version = fn(
        `async function onTrack(e) { if (e.event === 'Changed') e.properties.seen = true; return e; }`,
        'INSERT_DESTINATION',
      );
      const unchanged = { type: 'track', messageId: 'm-1', event: 'Kept', properties: { city: 'São Paulo' } };
      const changed = { type: 'track', messageId: 'm-2', event: 'Changed', properties: {} };
      const [kept, read] = await subject.invokeAll([
        { ...call(version, unchanged), payloadJson: JSON.stringify(unchanged) },
        { ...call(version, changed), payloadJson: JSON.stringify(changed) },
      ]);
      expect(kept).toMatchObject({ status: 'resolved', valueUnchanged: true });
      expect(kept!.status === 'resolved' && kept!.value).toBe(unchanged);
      expect(read).not.toHaveProperty('valueUnchanged');
      expect(read).toMatchObject({ status: 'resolved', value: { ...changed, properties: { seen: true } } });
    });

    it('compares with the payload as it was sent: its own JSON, or the JSON made of it', async () => {
      const version = fn(`async function onTrack(e) { return e; }`, 'INSERT_DESTINATION');
      const payload = { type: 'track', messageId: 'm-1', event: 'Kept', properties: { n: 1 } };
      const [fromObject, spaced, nested] = await subject.invokeAll([
        call(version, payload),
        // Stored with spaces: the value's JSON differs from it, so the value is read.
        { ...call(version, payload), payloadJson: JSON.stringify(payload, null, 1) },
        // A payload whose strings hold JSON text: where it lies is known, not searched for.
        call(version, { ...payload, properties: { text: JSON.stringify(payload) } }),
      ]);
      expect(fromObject).toMatchObject({ status: 'resolved', valueUnchanged: true });
      expect(fromObject!.status === 'resolved' && fromObject!.value).toBe(payload);
      expect(spaced).not.toHaveProperty('valueUnchanged');
      expect(spaced).toMatchObject({ status: 'resolved', value: payload });
      expect(nested).toMatchObject({
        status: 'resolved',
        valueUnchanged: true,
        value: { properties: { text: JSON.stringify(payload) } },
      });
    });
  });

  describe('quick functions on the process thread', () => {
    it('finishes an invocation that runs longer than a slice, keeping the results around it', async () => {
      const version = fn(
        `async function onTrack(e) { if (e.slow) { const t = Date.now(); while (Date.now() - t < 60); } return e.n; }`,
      );
      const results = await subject.invokeAll([
        call(version, { n: 1 }),
        call(version, { n: 2, slow: true }),
        call(version, { n: 3 }),
        call(version, { n: 4, slow: true }),
      ]);
      expect(results.map((result) => [result.status, 'value' in result && result.value])).toEqual([
        ['resolved', 1],
        ['resolved', 2],
        ['resolved', 3],
        ['resolved', 4],
      ]);
    });

    it('sends a fetch asked for before a slice ran out once, from the run that finished', async () => {
      const allowed = runner({ timeoutMs: 2_000, egress: { mode: 'public', allow: '127.0.0.1' } });
      const code = `async function onTrack(e, s) {
        const answer = fetch(s.base + '/once');
        const t = Date.now(); while (Date.now() - t < 60);
        return (await answer).status;
      }`;
      const before = hits;
      const result = await allowed.invoke(
        call(fn(code), undefined, 'onTrack', { base: `http://127.0.0.1:${port}` }),
      );
      expect(result).toMatchObject({ status: 'resolved', value: 200 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(hits - before).toBe(1);
    });

    it('waits for an invocation awaiting the host before it starts the next', async () => {
      const allowed = runner({ timeoutMs: 2_000, egress: { mode: 'public', allow: '127.0.0.1' } });
      const code = `let running = 0;
      async function onTrack(e, s) {
        running++;
        const busy = running;
        await (await fetch(s.base + '/hello')).text();
        running--;
        return busy;
      }`;
      const version = fn(code);
      const settings = { base: `http://127.0.0.1:${port}` };
      const results = await allowed.invokeAll([
        call(version, undefined, 'onTrack', settings),
        call(version, undefined, 'onTrack', settings),
        call(version, undefined, 'onTrack', settings),
      ]);
      expect(results.map((result) => 'value' in result && result.value)).toEqual([1, 1, 1]);
    });
  });

  describe('fetch (§8.4)', () => {
    const fetchCode = (path: string) => `async function onTrack(event, settings) {
      const response = await fetch(settings.base + '${path}', { method: 'POST', headers: { 'x-api-key': 'k' }, body: JSON.stringify({ a: 1 }) });
      return { status: response.status, seen: response.headers.get('x-seen'), body: await response.json(), redirected: response.redirected };
    }`;

    it('refuses a loopback server under the default policy', async () => {
      const result = await subject.invoke(
        call(fn(fetchCode('/hello')), undefined, 'onTrack', { base: `http://127.0.0.1:${port}` }),
      );
      expect(result).toMatchObject({
        status: 'threw',
        name: 'TypeError',
        message: expect.stringMatching(/^egress_denied: /),
      });
    });

    it('reaches it when the policy allows it, following redirects and checking each hop', async () => {
      const allowed = runner({ timeoutMs: 2_000, egress: { mode: 'public', allow: '127.0.0.1' } });
      const settings = { base: `http://127.0.0.1:${port}` };
      await expect(
        allowed.invoke(call(fn(fetchCode('/hello')), undefined, 'onTrack', settings)),
      ).resolves.toMatchObject({
        status: 'resolved',
        value: {
          status: 200,
          seen: 'k',
          body: { method: 'POST', url: '/hello', body: '{"a":1}' },
          redirected: false,
        },
      });
      await expect(
        allowed.invoke(call(fn(fetchCode('/redirect')), undefined, 'onTrack', settings)),
      ).resolves.toMatchObject({
        status: 'resolved',
        value: { status: 200, body: { method: 'GET', url: '/hello' }, redirected: true },
      });
      await expect(
        allowed.invoke(call(fn(fetchCode('/loop')), undefined, 'onTrack', settings)),
      ).resolves.toMatchObject({
        status: 'threw',
        message: expect.stringContaining('too many redirects'),
      });
      const other = `async function onTrack(e, s) { const out = []; for (const url of s.urls) { try { await fetch(url); out.push('ok'); } catch (error) { out.push(error.name + ': ' + error.message); } } return out; }`;
      const result = await allowed.invoke(
        call(fn(other), undefined, 'onTrack', {
          urls: ['file:///etc/passwd', `http://127.0.0.2:${port}/`, 'http://169.254.169.254/'],
        }),
      );
      expect(result).toMatchObject({
        status: 'resolved',
        value: [
          expect.stringMatching(/^TypeError: egress_denied: only http and https/),
          expect.stringMatching(/^TypeError: egress_denied: /),
          expect.stringMatching(/^TypeError: egress_denied: /),
        ],
      });
    });

    it('allows 20 calls per invocation and caps a response body at 5 MiB', async () => {
      const allowed = runner({ timeoutMs: 5_000, egress: { mode: 'public', allow: '127.0.0.1' } });
      const settings = { base: `http://127.0.0.1:${port}` };
      const many = `async function onTrack(e, s) { let n = 0; try { for (;;) { await (await fetch(s.base + '/hello')).text(); n++; } } catch (error) { return [n, error.name, error.message]; } }`;
      await expect(allowed.invoke(call(fn(many), undefined, 'onTrack', settings))).resolves.toMatchObject({
        value: [20, 'TypeError', 'fetch limit'],
      });
      const big = `async function onTrack(e, s) { const r = await fetch(s.base + '/big'); try { await r.text(); return 'read'; } catch (error) { return error.name + ': ' + error.message; } }`;
      await expect(allowed.invoke(call(fn(big), undefined, 'onTrack', settings))).resolves.toMatchObject({
        value: expect.stringMatching(/^TypeError: the response body is larger than 5242880 bytes/),
      });
    });

    it('counts an awaited fetch in the wall time', async () => {
      const allowed = runner({ timeoutMs: 500, egress: { mode: 'public', allow: '127.0.0.1' } });
      // The process starts first (loading its code is not the function's time).
      await allowed.invoke(call(fn('async function onTrack() {}')));
      const begun = Date.now();
      const result = await allowed.invoke(
        call(fn(`async function onTrack(e, s) { await fetch(s.base + '/slow'); }`), undefined, 'onTrack', {
          base: `http://127.0.0.1:${port}`,
        }),
      );
      expect(result).toMatchObject({ status: 'timeout', limitMs: 500 });
      expect(Date.now() - begun).toBeLessThan(3_000);
    });
  });

  describe('check', () => {
    it.each<[string, FunctionKind, string, unknown]>([
      [
        'a destination with a handler',
        'DESTINATION',
        'async function onTrack(e) {}\nconst onIdentify = async () => {};',
        { ok: true, handlers: ['onIdentify', 'onTrack'] },
      ],
      [
        'a source with onRequest',
        'SOURCE',
        'async function onRequest(request, settings) {}',
        { ok: true, handlers: ['onRequest'] },
      ],
      [
        'a syntax error',
        'DESTINATION',
        'async function onTrack(e) {\n  return 1 +;\n}',
        { ok: false, message: expect.stringMatching(/^SyntaxError: .*\(line 2, column \d+\)$/) },
      ],
      [
        'import',
        'DESTINATION',
        "import fs from 'fs';\nasync function onTrack() {}",
        { ok: false, message: expect.stringContaining('`import` and `export` are not allowed (line 1)') },
      ],
      [
        'export',
        'DESTINATION',
        'export async function onTrack() {}',
        { ok: false, message: expect.stringContaining('not allowed') },
      ],
      [
        'no handler',
        'DESTINATION',
        'async function helper() {}',
        { ok: false, message: expect.stringContaining('no handler') },
      ],
      [
        'a source without onRequest',
        'SOURCE',
        'async function onTrack() {}',
        { ok: false, message: expect.stringContaining('onRequest') },
      ],
      [
        'an insert function with onBatch only',
        'INSERT_DESTINATION',
        'async function onBatch() {}',
        { ok: false, message: expect.stringContaining('no handler') },
      ],
      ['empty code', 'DESTINATION', '   ', { ok: false, message: 'the code is empty' }],
      [
        'code over the size limit',
        'DESTINATION',
        `async function onTrack() {}\n//${'x'.repeat(128 * 1024)}`,
        { ok: false, message: expect.stringContaining('more than the 131072 allowed') },
      ],
    ])('%s', async (_, kind, code, expected) => {
      await expect(subject.check(kind, code)).resolves.toEqual(expected);
    });

    it('runs nothing of the code', async () => {
      const allowed = runner({ egress: { mode: 'public', allow: '127.0.0.1' } });
      const before = hits;
      await expect(
        allowed.check(
          'DESTINATION',
          `fetch('http://127.0.0.1:${port}/hello'); for (;;); async function onTrack() {}`,
        ),
      ).resolves.toEqual({ ok: true, handlers: ['onTrack'] });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(hits).toBe(before);
    });
  });
});
