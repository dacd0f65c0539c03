// The delivery ceiling's client: plain Node, in a thread of its own (as the router is a process of its
// own), POSTing each body with its X-Signature to the receiver, `concurrency` requests at a time over
// keep-alive connections, the way a webhook delivery does with no event log and no router around it.
// `client` 'undici' sends as the webhooks adapter does (undici's `dispatch`, each answer read whole);
// 'node:http' as this ceiling did until 2026-11-28, kept to compare with earlier figures. The
// `warmupBodies` go first, untimed, to a receiver of their own, so the timed requests run on warm code
// as the router's do (the phases it bounds run for 10 s and more).
'use strict';
const { createHmac } = require('node:crypto');
const http = require('node:http');
const { Agent: UndiciAgent } = require('undici');
const { parentPort, workerData } = require('node:worker_threads');
const { statusOf } = require('./undici-status');

const { url, warmupUrl, sharedSecret, bodies, warmupBodies, concurrency, client } = workerData;

function signedHeaders(body) {
  return {
    'content-type': 'application/json',
    'content-length': String(body.length),
    'x-signature': createHmac('sha1', sharedSecret).update(body).digest('hex'),
  };
}

function nodeHttpClient(target) {
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

function undiciClient(target) {
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

/** Sends every body, `concurrency` at a time, through a client of its own to `to`. */
async function sendAll(to, all) {
  const { post, close } = client === 'node:http' ? nodeHttpClient(new URL(to)) : undiciClient(new URL(to));
  let next = 0;
  const worker = async () => {
    while (next < all.length) await post(Buffer.from(all[next++], 'utf8'));
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, all.length) }, worker));
  } finally {
    await close();
  }
}

async function run() {
  if (warmupBodies.length > 0) await sendAll(warmupUrl, warmupBodies);
  // The bench reads every process's CPU before the timed part: it answers 'go' once it has.
  await new Promise((resolve) => {
    parentPort.once('message', resolve);
    parentPort.postMessage({ warmedUp: true });
  });
  const startedAt = Date.now();
  const cpuBefore = process.threadCpuUsage();
  await sendAll(url, bodies);
  const elapsedMs = Date.now() - startedAt;
  // This thread's CPU while it sent: the client's cost per request, apart from the receiver's.
  const cpu = process.threadCpuUsage(cpuBefore);
  parentPort.postMessage({ requests: bodies.length, elapsedMs, clientCpuMs: (cpu.user + cpu.system) / 1000 });
}

run().catch((error) =>
  parentPort.postMessage({ error: String(error && error.message ? error.message : error) }),
);
