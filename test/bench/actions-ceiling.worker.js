// The Actions ceiling's client: plain Node in a thread of its own (as each Actions call runs on a
// worker of the Actions lane), sending the very requests an Actions destination sent (method, path,
// headers, body) over TLS to the same loopback fake, trusting its CA and naming the vendor's host (SNI),
// `concurrency` at a time over keep-alive connections, with none of the destination's code around them.
'use strict';
const { Agent, request } = require('node:https');
const { parentPort, workerData } = require('node:worker_threads');

const { port, ca, requests, concurrency } = workerData;
/** Set by the client per request, not part of what the destination chose to send. */
const CONNECTION_HEADERS = new Set(['connection', 'content-length', 'transfer-encoding', 'keep-alive']);
const agent = new Agent({ keepAlive: true, scheduling: 'lifo', ca });

function send(recorded) {
  const body = Buffer.from(recorded.body, 'utf8');
  const headers = {};
  for (const [name, value] of Object.entries(recorded.headers))
    if (!CONNECTION_HEADERS.has(name)) headers[name] = value;
  headers['content-length'] = body.length;
  const hostName = recorded.host.replace(/:\d+$/, '');
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        servername: hostName,
        method: recorded.method,
        path: recorded.path,
        headers,
        agent,
      },
      (response) => {
        response.on('end', () =>
          response.statusCode >= 200 && response.statusCode < 300
            ? resolve()
            : reject(new Error(`HTTP ${response.statusCode}`)),
        );
        response.on('error', reject);
        response.resume();
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

async function sendAll(list) {
  let next = 0;
  const worker = async () => {
    while (next < list.length) await send(list[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, list.length) }, worker));
}

async function run() {
  // Untimed: opens the connections (TLS handshakes) and warms the code, as the destination's agents
  // and code are warm by the time its run is timed.
  const warmUp = requests.slice(0, Math.min(requests.length, concurrency * 4));
  await sendAll(warmUp);
  // The bench measures this process's CPU from here on.
  parentPort.postMessage({ timing: true });
  const startedAt = process.hrtime.bigint();
  await sendAll(requests);
  const elapsedMs = Number(process.hrtime.bigint() - startedAt) / 1e6;
  agent.destroy();
  parentPort.postMessage({ requests: requests.length, warmUpRequests: warmUp.length, elapsedMs });
}

run().catch((error) =>
  parentPort.postMessage({ error: String(error && error.message ? error.message : error) }),
);
