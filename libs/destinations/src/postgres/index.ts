export { postgresDefinition } from './postgres.definition';
export { PostgresDeliveryAdapter, type PostgresAdapterOptions } from './postgres.adapter';
export {
  planWarehouseRows,
  toSnakeCase,
  eventTableName,
  type WarehousePlan,
  type WarehouseRow,
  type WarehouseValue,
} from './warehouse-row.planner';
export { problemWithConnectionString, pinnedPostgresConnection } from './postgres-connection';
