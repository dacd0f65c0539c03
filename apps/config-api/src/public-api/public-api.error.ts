/** The Public API's error types (docs/public-api.md, "Errors"); `type` of `{errors: [{type, message, field?}]}`. */
export type PublicApiErrorType =
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'Conflict'
  | 'PayloadTooLarge'
  | 'ValidationFailure'
  | 'too-many-requests'
  | 'NotImplemented'
  | 'Unavailable'
  | 'InternalError';

/** A failure of a Public API request, answered by `PublicApiErrorFilter` as `{errors: [...]}`. */
export class PublicApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: PublicApiErrorType,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  static unauthorized(message: string) {
    return new PublicApiError(401, 'Unauthorized', message);
  }

  static forbidden(message: string) {
    return new PublicApiError(403, 'Forbidden', message);
  }

  /** Unknown ids and other workspaces' ids alike: the message never tells them apart. */
  static notFound(message = 'Resource not found') {
    return new PublicApiError(404, 'NotFound', message);
  }

  static conflict(message: string, field?: string) {
    return new PublicApiError(409, 'Conflict', message, field);
  }

  static validation(message: string, field?: string) {
    return new PublicApiError(422, 'ValidationFailure', message, field);
  }

  static notImplemented(what: string) {
    return new PublicApiError(501, 'NotImplemented', `${what} is not served by this Public API yet`);
  }
}
