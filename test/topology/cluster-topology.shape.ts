// What the cluster topology is made of, shared by its test kit (cluster-topology.kit.ts) and the
// check of docker-compose.cluster.yml, so the two cannot drift apart.

/** The environment every app of the cluster shares, beside `NATS_URL`; the compose file sets the same. */
export const CLUSTER_ENVIRONMENT = { NATS_STREAM_REPLICAS: '3' } as const;

/** How many of each part the topology runs; `docker-compose.cluster.yml` runs as many. */
export const CLUSTER_SHAPE = { natsNodes: 3, trackingApis: 2, routers: 2, configApis: 1 } as const;
