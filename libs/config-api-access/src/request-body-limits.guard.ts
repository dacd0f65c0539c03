import { CanActivate, ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ConfigApiError } from './config-api.error';

export interface RequestBodyLimits {
  /** Largest body, in bytes of its JSON. */
  maxBytes: number;
  /** Deepest nesting of arrays and objects; the body object itself is level 1. */
  maxDepth: number;
}

export const REQUEST_BODY_LIMITS = Symbol('ConfigApiRequestBodyLimits');

const LARGER_BODY_BYTES = 'config-api:larger-body-bytes';

/**
 * A route whose body may be larger than the configured limit, up to `bytes`: a regulation's create
 * carries up to 5,000 subject ids of up to 1,024 characters (docs/regulations.md §1).
 */
export const AcceptsBodiesUpTo = (bytes: number) => SetMetadata(LARGER_BODY_BYTES, bytes);

/**
 * Caps every Config API request body before any route reads it: its JSON at most `maxBytes`, nested at
 * most `maxDepth` deep (400, code 3). A Config API body becomes an event that every process folds at
 * every start and keeps in memory, so one oversized or deeply nested value would cost every process,
 * and a walk over it (masking secrets, serializing) could run out of stack. Runs after authentication
 * and the rate limit, so anonymous callers learn nothing and oversized bodies still spend the budget.
 */
@Injectable()
export class RequestBodyLimitsGuard implements CanActivate {
  constructor(
    @Inject(REQUEST_BODY_LIMITS) private readonly limits: RequestBodyLimits,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const body = context.switchToHttp().getRequest<FastifyRequest>().body;
    if (body === undefined) return true;
    if (exceedsJsonDepth(body, this.limits.maxDepth)) {
      throw ConfigApiError.invalidArgument(
        `the request body is nested deeper than ${this.limits.maxDepth} levels of objects and arrays`,
      );
    }
    // Measured on the parsed value (whitespace of the sent text does not count); safe to serialize
    // now that its depth is bounded.
    const bytes = Buffer.byteLength(JSON.stringify(body) ?? '');
    const maxBytes = Math.max(
      this.limits.maxBytes,
      this.reflector.get<number | undefined>(LARGER_BODY_BYTES, context.getHandler()) ?? 0,
    );
    if (bytes > maxBytes) {
      throw ConfigApiError.invalidArgument(
        `the request body is ${bytes} bytes of JSON; a resource may have at most ${maxBytes}`,
      );
    }
    return true;
  }
}

/**
 * True when `value` nests objects and arrays deeper than `maxDepth` (a scalar is depth 0, `{}` and `[]`
 * depth 1). Iterative with an explicit stack, and it stops at the first path that is too deep.
 */
export function exceedsJsonDepth(value: unknown, maxDepth: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [current, depth] = next;
    if (typeof current !== 'object' || current === null) continue;
    if (depth + 1 > maxDepth) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
    }
  }
  return false;
}
