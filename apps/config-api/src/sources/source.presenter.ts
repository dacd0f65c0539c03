import { MASKED_SECRET, sourceName, workspaceName } from '@tributary/contracts';
import { SchemaConfig, SourceRecord, writeKeysOf } from '@tributary/config-domain';
import type { CatalogDestinationDefinition } from '@tributary/destinations';
import { presentSettingValue } from '../destinations/destination.presenter';
import { withMilliseconds } from '../shared/timestamps';

/** What a source function's presentation needs beyond the source: its function and where its URL starts. */
export interface SourceFunctionContext {
  /** The source's function as a catalog entry (its deployed version's settings). */
  entry: CatalogDestinationDefinition | undefined;
  /** `PUBLIC_BASE_URL`, or the scheme and host of the request, without a trailing `/`. */
  baseUrl: string;
}

/**
 * The source; a source function also shows its `function_config` (every declared setting, sensitive
 * ones masked) and `webhook_url`, the address its function answers at, keyed by the oldest live write
 * key (docs/functions.md §1, §2).
 *
 * `writeKeysVisible`: false for a read-only caller (`maySeeSecrets`), who sees each write key as the
 * mask: a write key lets anyone holding it ingest, which a `workspace:read` token must not be able to.
 * The webhook URL carries the write key, so such a caller sees its `b` masked too.
 */
export function presentSource(
  source: SourceRecord,
  writeKeysVisible: boolean,
  functionContext?: SourceFunctionContext,
) {
  return {
    ...presentPlainSource(source, writeKeysVisible),
    ...(source.functionId !== undefined &&
      functionContext !== undefined && {
        function_config: (functionContext.entry?.settings ?? []).map((setting) => ({
          name: setting.key,
          display_name: setting.displayName,
          value: presentSettingValue(
            source.functionId!,
            setting,
            source.functionConfig?.[setting.key] ?? setting.defaultValue,
          ),
          type: setting.type,
        })),
        webhook_url: writeKeysVisible
          ? functionWebhookUrl(functionContext.baseUrl, writeKeysOf(source)[0]!)
          : `${functionContext.baseUrl}/v1/fn?b=${MASKED_SECRET}`,
      }),
  };
}

/** `<base>/v1/fn?b=<base64url of the write key>`: the tracking API's source-function endpoint. */
export function functionWebhookUrl(baseUrl: string, writeKey: string): string {
  return `${baseUrl}/v1/fn?b=${Buffer.from(writeKey).toString('base64url')}`;
}

/** `PUBLIC_BASE_URL` (a path prefix kept, trailing `/` dropped), or the request's scheme and host. */
export function publicBaseUrl(
  configured: string | undefined,
  request: { protocol: string; host: string },
): string {
  if (configured !== undefined) return configured.replace(/(?<!\/)\/+$/, '');
  return `${request.protocol === 'http' ? 'http' : 'https'}://${request.host}`;
}

function presentPlainSource(source: SourceRecord, writeKeysVisible: boolean) {
  return {
    name: sourceName(source),
    parent: workspaceName(source.workspaceSlug),
    catalog_name: source.catalogName,
    display_name: source.displayName,
    id: source.sourceId,
    write_keys: writeKeysVisible ? writeKeysOf(source) : writeKeysOf(source).map(() => MASKED_SECRET),
    library_config: {
      metrics_enabled: false,
      retry_queue: false,
      cross_domain_id_enabled: false,
      api_host: '',
    },
    labels: {},
    allowed_origins: source.allowedOrigins ?? [],
    create_time: withMilliseconds(source.createTime),
  };
}

export function presentSchemaConfig(source: SourceRecord, schemaConfig: SchemaConfig) {
  const parent = sourceName(source);
  return { name: `${parent}/schema-config`, parent, ...schemaConfig };
}
