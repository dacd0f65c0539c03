/** gRPC status codes as the Config API reports them in `{"error": "...", "code": N}` (docs/tracking-api.md §4). */
export const GrpcCode = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  /** Valid, but not allowed in the resource's current state; answered with 400 as grpc-gateway does. */
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** An error whose status, code and message are meant for the client as they are. */
export class ConfigApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ConfigApiError';
  }

  static invalidArgument = (message: string) => new ConfigApiError(400, GrpcCode.INVALID_ARGUMENT, message);
  static unauthenticated = (message: string) => new ConfigApiError(401, GrpcCode.UNAUTHENTICATED, message);
  static permissionDenied = (message = 'insufficient scope') =>
    new ConfigApiError(403, GrpcCode.PERMISSION_DENIED, message);
  static notFound = (message: string) => new ConfigApiError(404, GrpcCode.NOT_FOUND, message);
  static alreadyExists = (message: string) => new ConfigApiError(409, GrpcCode.ALREADY_EXISTS, message);
  static failedPrecondition = (message: string) =>
    new ConfigApiError(400, GrpcCode.FAILED_PRECONDITION, message);
  static aborted = (message: string) => new ConfigApiError(409, GrpcCode.ABORTED, message);
  static unimplemented = (message: string) => new ConfigApiError(501, GrpcCode.UNIMPLEMENTED, message);
  static unavailable = (message: string) => new ConfigApiError(503, GrpcCode.UNAVAILABLE, message);
}
