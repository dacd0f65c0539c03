import {
  BATCH_REJECTION_CODES,
  EVENT_TYPES,
  TRACKING_ERROR_CODES,
  TRACKING_ERROR_STATUS,
  TRACKING_ROUTES,
  TRACKING_ROUTE_PATHS,
  batchRejectionSchema,
  isBatchRoute,
  isEventType,
  isTrackingRoute,
  normalizedMessageSchema,
  trackingErrorBody,
  trackingErrorBodySchema,
  trackingSuccessBody,
  trackingSuccessBodySchema,
  utcMillisecondTimestampSchema,
} from '@tributary/contracts';

describe('tracking routes and event types', () => {
  it('lists the six Segment event types', () => {
    expect(EVENT_TYPES).toEqual(['track', 'identify', 'page', 'screen', 'group', 'alias']);
  });

  it('lists batch, import and one route per event type, each under /v1/', () => {
    expect(TRACKING_ROUTES).toEqual(['batch', 'import', ...EVENT_TYPES]);
    for (const route of TRACKING_ROUTES) expect(TRACKING_ROUTE_PATHS[route]).toBe(`/v1/${route}`);
  });

  it('tells batch routes from single-event routes', () => {
    expect(isBatchRoute('batch')).toBe(true);
    expect(isBatchRoute('import')).toBe(true);
    for (const type of EVENT_TYPES) expect(isBatchRoute(type)).toBe(false);
  });

  it.each([['Track'], ['TRACK'], [''], ['event'], [undefined], [null], [1], [['track']]])(
    'does not take %p for an event type or a route',
    (value) => {
      expect(isEventType(value)).toBe(false);
      expect(isTrackingRoute(value)).toBe(false);
    },
  );
});

describe('tracking error body', () => {
  it('given a code and a text, builds {success:false, code, message, error} with error repeating message', () => {
    const body = trackingErrorBody('invalid_json', 'Request body is not valid JSON');
    expect(body).toEqual({
      success: false,
      code: 'invalid_json',
      message: 'Request body is not valid JSON',
      error: 'Request body is not valid JSON',
    });
    expect(trackingErrorBodySchema.parse(body)).toEqual(body);
  });

  it('maps every code of docs/tracking-api.md §9.2 to its status', () => {
    expect(TRACKING_ERROR_STATUS).toEqual({
      invalid_json: 400,
      invalid_request: 400,
      payload_too_large: 400,
      invalid_write_key: 401,
      unauthorized: 401,
      no_user_anon_id: 400,
      missing_event: 400,
      invalid_type: 400,
      invalid_message_id: 400,
      wrong_region: 400,
      not_found: 404,
      origin_not_allowed: 403,
      method_not_allowed: 405,
      rate_limited: 429,
      internal: 500,
      unavailable: 503,
    });
    expect(TRACKING_ERROR_CODES).toHaveLength(16);
  });

  it.each([
    ['missing error (Ruby reads it)', { success: false, code: 'internal', message: 'x' }],
    ['missing message (Python retries then)', { success: false, code: 'internal', error: 'x' }],
    ['missing code (Python retries then)', { success: false, message: 'x', error: 'x' }],
    ['an unknown code', { success: false, code: 'teapot', message: 'x', error: 'x' }],
    ['success true', { success: true, code: 'internal', message: 'x', error: 'x' }],
    ['a non-string message', { success: false, code: 'internal', message: 1, error: 'x' }],
    ['an extra key', { success: false, code: 'internal', message: 'x', error: 'x', status: 500 }],
  ])('refuses an error body with %s', (_, body) => {
    expect(trackingErrorBodySchema.safeParse(body).success).toBe(false);
  });
});

describe('tracking success body', () => {
  it('is exactly {success:true} when nothing was rejected', () => {
    expect(trackingSuccessBody()).toEqual({ success: true });
    expect(trackingSuccessBody([])).toEqual({ success: true });
  });

  it('lists rejections and carries no error key (Ruby would read it as a failure)', () => {
    const body = trackingSuccessBody([{ index: 3, messageId: 'm-3', code: 'no_user_anon_id', message: 'x' }]);
    expect(body).toEqual({
      success: true,
      rejected: [{ index: 3, messageId: 'm-3', code: 'no_user_anon_id', message: 'x' }],
    });
    expect(trackingSuccessBodySchema.parse(body)).toEqual(body);
    expect(trackingSuccessBodySchema.safeParse({ ...body, error: 'x' }).success).toBe(false);
  });

  it('accepts batch_too_long and every message rejection code, and nothing else', () => {
    expect(BATCH_REJECTION_CODES).toEqual([
      'no_user_anon_id',
      'missing_event',
      'invalid_type',
      'invalid_message_id',
      'invalid_request',
      'batch_too_long',
    ]);
    expect(batchRejectionSchema.safeParse({ index: 0, code: 'rate_limited', message: 'x' }).success).toBe(
      false,
    );
    expect(batchRejectionSchema.safeParse({ index: -1, code: 'batch_too_long', message: 'x' }).success).toBe(
      false,
    );
    expect(batchRejectionSchema.safeParse({ index: 1.5, code: 'batch_too_long', message: 'x' }).success).toBe(
      false,
    );
    expect(trackingSuccessBodySchema.safeParse({ success: true, rejected: [] }).success).toBe(false);
  });
});

describe('normalized message schema', () => {
  const base = {
    messageId: 'm-1',
    userId: 'u1',
    context: {},
    integrations: {},
    timestamp: '2026-11-25T21:15:05.320Z',
    receivedAt: '2026-11-25T21:15:06.000Z',
  };

  it.each([
    { type: 'track', event: 'Signed Up' },
    { type: 'identify', traits: { email: 'a@b' } },
    { type: 'page', name: 'Home' },
    { type: 'screen', name: 'Main' },
    { type: 'group', groupId: 'g1' },
    { type: 'alias', previousId: 'u0' },
  ])('accepts a normalized $type message and keeps unknown keys', (fields) => {
    const message = { ...base, ...fields, custom: { kept: true } };
    expect(normalizedMessageSchema.parse(message)).toEqual(message);
  });

  it.each([
    ['a track without event', { type: 'track' }],
    ['an unknown type', { type: 'event', event: 'x' }],
    ['no userId nor anonymousId', { type: 'identify', userId: undefined }],
    ['an empty userId and no anonymousId', { type: 'identify', userId: '' }],
    ['a numeric userId', { type: 'identify', userId: 1 }],
    ['a 101-character messageId', { type: 'identify', messageId: 'x'.repeat(101) }],
    ['an empty messageId', { type: 'identify', messageId: '' }],
    ['a timestamp with an offset', { type: 'identify', timestamp: '2026-11-25T21:15:05.320+00:00' }],
    ['a timestamp without milliseconds', { type: 'identify', timestamp: '2026-11-25T21:15:05Z' }],
    ['a receivedAt with microseconds', { type: 'identify', receivedAt: '2026-11-25T21:15:05.320774Z' }],
    ['a context that is an array', { type: 'identify', context: [] }],
    ['a missing integrations object', { type: 'identify', integrations: undefined }],
  ])('refuses %s', (_, fields) => {
    expect(normalizedMessageSchema.safeParse({ ...base, ...fields }).success).toBe(false);
  });

  it('counts a messageId in characters, not UTF-16 units: 100 emoji pass', () => {
    const message = { ...base, type: 'identify', messageId: '😀'.repeat(100) };
    expect(normalizedMessageSchema.safeParse(message).success).toBe(true);
  });

  it('accepts exactly RFC 3339 UTC with three fraction digits', () => {
    expect(utcMillisecondTimestampSchema.safeParse('2026-11-25T21:15:05.320Z').success).toBe(true);
    expect(utcMillisecondTimestampSchema.safeParse('2026-11-25T21:15:05.32Z').success).toBe(false);
    expect(utcMillisecondTimestampSchema.safeParse('2026-11-25 21:15:05.320Z').success).toBe(false);
  });
});
