import { MASKED_SECRET, sourceName, workspaceName } from '@tributary/contracts';
import { SchemaConfig, SourceRecord, writeKeysOf } from '@tributary/config-domain';
import { withMilliseconds } from '../shared/timestamps';

/**
 * `writeKeysVisible`: false for a read-only caller (`maySeeSecrets`), who sees each write key as the
 * mask: a write key lets anyone holding it ingest, which a `workspace:read` token must not be able to.
 */
export function presentSource(source: SourceRecord, writeKeysVisible: boolean) {
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
