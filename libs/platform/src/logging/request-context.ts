import { AsyncLocalStorage } from 'node:async_hooks';

export interface RequestContext {
  requestId: string;
}

/**
 * The request being handled, for log lines written anywhere below its controller: entered once per
 * request by the HTTP server (after the body is read, so stream callbacks cannot lose it).
 */
export const requestContext = new AsyncLocalStorage<RequestContext>();

export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}
