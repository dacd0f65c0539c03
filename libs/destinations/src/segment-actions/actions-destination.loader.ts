/**
 * Loads Segment Actions destinations one at a time, on first use. Requiring one destination's folder
 * costs tens of milliseconds and a few MB; the package index would load all of them (and needs a module
 * the package does not declare).
 *
 * Each destination is built with an `extendRequest` that wraps the destination's own: every request
 * gets the egress guard's agents and dispatcher (so it connects only to checked addresses), `redirect:
 * 'manual'` (followed redirects would turn a POST into a GET past the guard and report success),
 * Tributary's timeout, and a cap on the bytes read of each response after decompression (node-fetch
 * inflates gzip by default: a 300 KB answer can become 300 MB). Each request also notes its host in
 * the `contactedHosts` of the call it belongs to, so a failure can be told apart by where it came from.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { join, dirname } from 'node:path';
import type { EgressAgents } from '../delivery/egress/egress-agents';
import type { ActionsDefinition, ActionsRuntime, RunnableActionsDestination } from './actions-core.types';
import { installLinearTemplates } from './actions-template.renderer';
import { installBufferedFetch } from './actions-fetch.client';
import { installMappingValidationCache } from './actions-mapping-validation.cache';
import { MAX_ACTIONS_RESPONSE_BYTES } from './actions-error.classifier';

let contactedHostsStorage: AsyncLocalStorage<Set<string>> | undefined;

/**
 * The host names the requests of the current call (a delivery, an authentication test) went to. Made
 * on first use, which is in the Actions lane's workers: a process that only starts the lane keeps no
 * async-local storage (on older runtimes, any turns promise hooks on for the whole process).
 */
export function contactedHosts(): AsyncLocalStorage<Set<string>> {
  contactedHostsStorage ??= new AsyncLocalStorage<Set<string>>();
  return contactedHostsStorage;
}

export interface ActionsRequestOptions {
  readonly agents: EgressAgents;
  /** Per HTTP request made by an action. */
  readonly requestTimeoutMs: number;
}

type AnyDefinition = ActionsDefinition;

let destinationsRoot: string | undefined;

function definitionOf(dir: string): AnyDefinition {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(dir)) throw new Error(`not an Actions destination folder: ${dir}`);
  destinationsRoot ??= join(
    dirname(require.resolve('@segment/action-destinations/package.json')),
    'dist',
    'destinations',
  );
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const loaded = require(join(destinationsRoot, dir)) as { default?: AnyDefinition };
  return (loaded.default ?? loaded) as AnyDefinition;
}

/** A runnable destination whose requests keep to `options`. */
export function loadActionsDestination(
  dir: string,
  options: ActionsRequestOptions,
): RunnableActionsDestination {
  const definition = definitionOf(dir);
  const ownExtendRequest = definition.extendRequest;
  // node-fetch calls a function `agent` with the URL; actions-core calls `agent.destroy()` after every
  // response (it expects an agent per request), which must not end the shared keep-alive agents. The
  // buffered fetch asks for the same connections' undici dispatcher instead (`actions-fetch.client.ts`).
  const noteHost = (url: { hostname?: string | null }) => {
    if (url.hostname) contactedHosts().getStore()?.add(url.hostname);
  };
  const agent = Object.assign(
    (url: URL) => {
      noteHost(url);
      return options.agents.forUrl(url);
    },
    {
      dispatcherFor: (url: { hostname?: string | null }) => {
        noteHost(url);
        return options.agents.dispatcher;
      },
      destroy: () => undefined,
    },
  );
  const extendRequest: AnyDefinition['extendRequest'] = (context) => ({
    ...(ownExtendRequest?.(context) ?? {}),
    agent,
    redirect: 'manual',
    timeout: options.requestTimeoutMs,
    size: MAX_ACTIONS_RESPONSE_BYTES,
  });
  const destination = new (actionsRuntime().Destination)({ ...definition, extendRequest });
  // Each action keeps every response it emits in `destination.responses`, for Segment's test tooling:
  // in a long-running router that list would grow with every delivery.
  for (const action of Object.values(destination.actions)) action.removeAllListeners('response');
  return destination;
}

let runtime: ActionsRuntime | undefined;

/** `@segment/actions-core`, loaded with the first destination. */
export function actionsRuntime(): ActionsRuntime {
  // Required rather than imported: its type declarations bring DOM fetch types that clash with Node's.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  runtime ??= require('@segment/actions-core') as ActionsRuntime;
  installLinearTemplates();
  installBufferedFetch();
  installMappingValidationCache();
  return runtime;
}
