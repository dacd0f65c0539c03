// The delivery ceiling's client: plain Node, in a thread of its own (as the router is a process of its
// own), POSTing each body with its X-Signature to the receiver, `concurrency` requests at a time over
// keep-alive connections, the way a webhook delivery does with no event log and no router around it.
// `client` 'undici' sends as the webhooks adapter does (undici's `dispatch`, each answer read whole);
// 'node:http' as this ceiling did until 2026-11-28, kept to compare with earlier figures.
'use strict';
const { createHmac } = require('node:crypto');
const http = require('node:http');
const { Agent: UndiciAgent } = require('undici');
const { parentPort, workerData } = require('node:worker_threads');
const { statusOf } = require('./undici-status');

const { url, sharedSecret, bodies, concurrency, client } = workerData;
const target = new URL(url);

function signedHeaders(body) {
  return {
    'content-type': 'application/json',
    'content-length': String(body.length),
    'x-signature': createHmac('sha1', sharedSecret).update(body).digest('hex'),
  };
}

function nodeHttpClient() {
  const agent = new http.Agent({ keepAlive: true, scheduling: 'lifo', noDelay: true });
  const post = (body) =>
    new Promise((resolve, reject) => {
      const outgoing = http.request(
        target,
        { method: 'POST', headers: signedHeaders(body), agent },
        (response) => {
          response.on('end', () =>
            response.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${response.statusCode}`)),
          );
          response.on('error', reject);
          response.resume();
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  return { post, close: async () => agent.destroy() };
}

function undiciClient() {
  const agent = new UndiciAgent();
  const post = (body) =>
    statusOf(agent, {
      origin: target.origin,
      path: target.pathname,
      method: 'POST',
      headers: signedHeaders(body),
      body,
    }).then((status) => {
      if (status !== 200) throw new Error(`HTTP ${status}`);
    });
  return { post, close: () => agent.close() };
}

async function run() {
  const { post, close } = client === 'node:http' ? nodeHttpClient() : undiciClient();
  let next = 0;
  const startedAt = Date.now();
  const cpuBefore = process.threadCpuUsage();
  const worker = async () => {
    while (next < bodies.length) await post(Buffer.from(bodies[next++], 'utf8'));
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, bodies.length) }, worker));
  const elapsedMs = Date.now() - startedAt;
  // This thread's CPU while it sent: the client's cost per request, apart from the receiver's.
  const cpu = process.threadCpuUsage(cpuBefore);
  await close();
  parentPort.postMessage({ requests: bodies.length, elapsedMs, clientCpuMs: (cpu.user + cpu.system) / 1000 });
}

run().catch((error) =>
  parentPort.postMessage({ error: String(error && error.message ? error.message : error) }),
);
