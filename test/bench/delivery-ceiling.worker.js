// The delivery ceiling's client: plain Node, in a thread of its own (as the router is a process of its
// own), POSTing each body with its X-Signature to the receiver, `concurrency` requests at a time over
// keep-alive connections, the way a webhook delivery does with no event log and no router around it.
'use strict';
const { createHmac } = require('node:crypto');
const { Agent, request } = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');

const { url, sharedSecret, bodies, concurrency } = workerData;
const agent = new Agent({ keepAlive: true, scheduling: 'lifo', noDelay: true });
const target = new URL(url);

function post(text) {
  const body = Buffer.from(text, 'utf8');
  const headers = {
    'content-type': 'application/json',
    'content-length': body.length,
    'x-signature': createHmac('sha1', sharedSecret).update(body).digest('hex'),
  };
  return new Promise((resolve, reject) => {
    const outgoing = request(target, { method: 'POST', headers, agent }, (response) => {
      response.on('end', () =>
        response.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${response.statusCode}`)),
      );
      response.on('error', reject);
      response.resume();
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

async function run() {
  let next = 0;
  const startedAt = Date.now();
  const worker = async () => {
    while (next < bodies.length) await post(bodies[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, bodies.length) }, worker));
  const elapsedMs = Date.now() - startedAt;
  agent.destroy();
  parentPort.postMessage({ requests: bodies.length, elapsedMs });
}

run().catch((error) =>
  parentPort.postMessage({ error: String(error && error.message ? error.message : error) }),
);
