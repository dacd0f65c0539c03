import { z } from 'zod';

/**
 * Request bodies of the Config API. Every object is loose: clients echo read-only fields
 * (`create_time`, `name`, `id`, `library_config`, ...) and those must not fail a request (docs/config-api.md §5.5).
 * `null` is accepted wherever a field is optional, as Go clients send it.
 */

export const UpdateMaskSchema = z.looseObject({ paths: z.array(z.string()).nullish() }).nullish();

export const CreateWorkspaceRequestSchema = z.looseObject({
  workspace: z.looseObject({
    name: z.string().regex(/^workspaces\/[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/, 'must be workspaces/<slug>'),
    display_name: z.string().nullish(),
    /** Where the workspace's tracking data is served: `us` (Oregon) or `eu` (Dublin); default the deployment's. */
    region: z.enum(['us', 'eu']).nullish(),
  }),
});

export const UpdateWorkspaceRequestSchema = z.looseObject({
  workspace: z.looseObject({ display_name: z.string().nullish(), oauth_required: z.boolean().nullish() }),
  update_mask: UpdateMaskSchema,
});

export const AccessTokenScopeSchema = z.enum(['workspace', 'workspace:read']);

export const CreateAccessTokenRequestSchema = z.looseObject({
  access_token: z.looseObject({
    description: z.string().nullish(),
    scopes: AccessTokenScopeSchema,
    workspace_names: z.array(z.string().regex(/^workspaces\/[^/]+$/, 'must be workspaces/<slug>')).nullish(),
    /** When the token stops working (RFC 3339); absent: never. The console's sign-in sets one. */
    expire_time: z.iso.datetime({ offset: true }).nullish(),
  }),
});

export const ConfigEntryRequestSchema = z.looseObject({
  name: z.string().min(1),
  value: z.unknown().optional(),
  /** Optional: C9 sends entries without a type; the catalog knows it. */
  type: z.string().nullish(),
});

export const CreateSourceRequestSchema = z.looseObject({
  source: z.looseObject({
    name: z.string().min(1),
    catalog_name: z.string().min(1),
    display_name: z.string().nullish(),
    /** Tributary's extension: web origins whose pages may send events from a browser; empty: any. */
    allowed_origins: z.array(z.string()).nullish(),
    /** A source function's settings (`catalog_name` naming an `sfn_…` function of the workspace). */
    function_config: z.array(ConfigEntryRequestSchema).nullish(),
  }),
});

/** Tributary's extension: a source's `allowed_origins` is updatable (`update_mask` path
 *  `source.allowed_origins`), entries checked by the source's decider; a source function's
 *  `function_config` too (`source.function_config`). */
export const UpdateSourceRequestSchema = z.looseObject({
  source: z.looseObject({
    allowed_origins: z.array(z.string()).nullish(),
    function_config: z.array(ConfigEntryRequestSchema).nullish(),
  }),
  update_mask: UpdateMaskSchema,
});

export const UpdateSchemaConfigRequestSchema = z.looseObject({
  schema_config: z.record(z.string(), z.unknown()).nullish(),
  update_mask: UpdateMaskSchema,
});

export const ConnectionModeSchema = z
  .string()
  .transform((mode) => mode.toUpperCase())
  .pipe(z.enum(['UNSPECIFIED', 'CLOUD', 'DEVICE']));

export const CreateDestinationRequestSchema = z.looseObject({
  destination: z.looseObject({
    name: z.string().min(1),
    /**
     * Tributary's extension: `catalog/destinations/<slug>` when the destination's own slug differs
     * from its catalog slug (a second webhook on one source). Absent: the slug is the catalog slug.
     */
    catalog_name: z.string().nullish(),
    connection_mode: ConnectionModeSchema.nullish(),
    enabled: z.boolean().nullish(),
    config: z.array(ConfigEntryRequestSchema).nullish(),
  }),
});

export const UpdateDestinationRequestSchema = z.looseObject({
  destination: z.looseObject({
    enabled: z.boolean().nullish(),
    connection_mode: ConnectionModeSchema.nullish(),
    config: z.array(ConfigEntryRequestSchema).nullish(),
  }),
  update_mask: UpdateMaskSchema,
});

export const FilterActionSchema = z.looseObject({ type: z.string() });

export const FilterBodySchema = z.looseObject({
  title: z.string().nullish(),
  description: z.string().nullish(),
  if: z.string().nullish(),
  enabled: z.boolean().nullish(),
  actions: z.array(FilterActionSchema).nullish(),
});

/** C1 also sends an update_mask on create; it is ignored there. */
export const FilterRequestSchema = z.looseObject({ filter: FilterBodySchema, update_mask: UpdateMaskSchema });

export const TrackingPlanBodySchema = z.looseObject({
  display_name: z.string().nullish(),
  rules: z.record(z.string(), z.unknown()).nullish(),
});

export const CreateTrackingPlanRequestSchema = z.looseObject({ tracking_plan: TrackingPlanBodySchema });

export const UpdateTrackingPlanRequestSchema = z.looseObject({
  tracking_plan: TrackingPlanBodySchema,
  update_mask: UpdateMaskSchema,
});

export const CreateSourceConnectionRequestSchema = z.looseObject({ source_name: z.string().min(1) });

export const BatchCreateSourceConnectionsRequestSchema = z.looseObject({
  source_names: z.array(z.string().min(1)).min(1),
});

export type CreateWorkspaceRequest = z.infer<typeof CreateWorkspaceRequestSchema>;
export type UpdateWorkspaceRequest = z.infer<typeof UpdateWorkspaceRequestSchema>;
export type CreateAccessTokenRequest = z.infer<typeof CreateAccessTokenRequestSchema>;
export type CreateSourceRequest = z.infer<typeof CreateSourceRequestSchema>;
export type UpdateSourceRequest = z.infer<typeof UpdateSourceRequestSchema>;
export type UpdateSchemaConfigRequest = z.infer<typeof UpdateSchemaConfigRequestSchema>;
export type CreateDestinationRequest = z.infer<typeof CreateDestinationRequestSchema>;
export type UpdateDestinationRequest = z.infer<typeof UpdateDestinationRequestSchema>;
export type FilterRequest = z.infer<typeof FilterRequestSchema>;
export type CreateReplayRequest = z.infer<typeof CreateReplayRequestSchema>;
export type CreateOAuthApplicationRequest = z.infer<typeof CreateOAuthApplicationRequestSchema>;
export type UpdateOAuthApplicationRequest = z.infer<typeof UpdateOAuthApplicationRequestSchema>;
export type TrackingPlanBody = z.infer<typeof TrackingPlanBodySchema>;
export type UpdateTrackingPlanRequest = z.infer<typeof UpdateTrackingPlanRequestSchema>;

const ReplayBodySchema = z.looseObject({
  start_time: z.string().min(1, 'start_time is required (RFC 3339)').nullish(),
  end_time: z.string().nullish(),
});

/** `{"start_time": ..., "end_time": ...}`, or the same wrapped as `{"replay": {...}}`, the API's usual style. */
export const CreateReplayRequestSchema = ReplayBodySchema.extend({ replay: ReplayBodySchema.nullish() });

export const OAuthPublicKeyRequestSchema = z.looseObject({
  key_id: z.string().min(1),
  /** Required for a new key; on update, a key already registered may be named by `key_id` alone. */
  pem: z.string().nullish(),
});

export const CreateOAuthApplicationRequestSchema = z.looseObject({
  oauth_application: z.looseObject({
    display_name: z.string().min(1),
    public_keys: z.array(OAuthPublicKeyRequestSchema).min(1),
    token_lifetime_seconds: z.number().int().nullish(),
  }),
});

export const UpdateOAuthApplicationRequestSchema = z.looseObject({
  oauth_application: z.looseObject({
    display_name: z.string().nullish(),
    public_keys: z.array(OAuthPublicKeyRequestSchema).nullish(),
    token_lifetime_seconds: z.number().int().nullish(),
  }),
  update_mask: UpdateMaskSchema,
});

/**
 * A regulation's create (docs/regulations.md §2). Only the shape is checked here; the type names,
 * the subject type and the ids are checked by the regulation's domain rules, which name the field.
 */
export const CreateRegulationRequestSchema = z.looseObject({
  regulation_type: z.string(),
  attributes: z.looseObject({ name: z.string(), values: z.array(z.unknown()) }),
});
export type CreateRegulationRequest = z.infer<typeof CreateRegulationRequestSchema>;

/**
 * A function as v1beta writes it (docs/functions.md §1). Only the shape is checked here; settings
 * are checked by the function's domain rules, which name the entry, and code by the sandbox.
 */
/** The three kinds of function (`type` on the wire; specs/functions.md §1). */
export const FUNCTION_KINDS = ['SOURCE', 'DESTINATION', 'INSERT_DESTINATION'] as const;
export type FunctionKind = (typeof FUNCTION_KINDS)[number];

export const FunctionBodySchema = z.looseObject({
  display_name: z.string().nullish(),
  description: z.string().nullish(),
  logo_url: z.string().nullish(),
  code: z.string().nullish(),
  buildpack: z.string().nullish(),
  settings: z.array(z.unknown()).nullish(),
  /** Accepted in the body when the query string does not name the type. */
  type: z.string().nullish(),
});

export const CreateFunctionRequestSchema = z.looseObject({ function: FunctionBodySchema });

export const UpdateFunctionRequestSchema = z.looseObject({
  function: FunctionBodySchema,
  update_mask: UpdateMaskSchema,
});
export type UpdateFunctionRequest = z.infer<typeof UpdateFunctionRequestSchema>;
