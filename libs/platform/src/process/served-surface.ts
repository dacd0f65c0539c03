import type { DynamicModule, ExceptionFilter, Provider, Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';

/** An error shape a surface answers in, for the request paths it claims. */
export interface ClaimedPaths {
  claims(path: string): boolean;
  errorFilter: ExceptionFilter;
}

/**
 * One HTTP surface a process serves (the Config API, the tracking API, the router's routes), as its
 * app declares it beside its root module. `createProcessApplication` builds a process from a list of
 * them, so the standalone apps and the all-in-one are composed the same way.
 */
export interface ServedSurface {
  /** The modules that serve it: its app's root module and what it needs from libs. */
  imports: (DynamicModule | Type)[];
  /** Providers the process root holds once for it (a collector of its metrics). */
  providers?: Provider[];
  /** Whose error body answers requests refused before routing (see `HttpApis`). */
  edgeApi: 'config' | 'tracking';
  /** Answers every request that reaches no controller's own filter, when the surface is alone on its port. */
  errorFilter: ExceptionFilter;
  /** When it shares the port with other surfaces: the paths whose unrouted requests are its, in order. */
  claimedPaths: ClaimedPaths[];
  /** True when it appends tracking messages to the log: only then does the process run a dedupe index. */
  publishesTracking?: boolean;
  /** Runs once the application exists, before it listens (the OpenAPI document of its routes). */
  onCreated?(app: NestFastifyApplication): void;
}
