import { normalizedMessageSchema } from '@tributary/contracts';
import {
  eventTableName,
  fitValueToColumn,
  inferColumnType,
  isIsoDateTime,
  planWarehouseRows,
  toSnakeCase,
} from './warehouse-row.planner';

const common = {
  messageId: 'm-1',
  userId: 'u-1',
  context: {},
  integrations: {},
  timestamp: '2026-01-01T00:00:00.000Z',
  receivedAt: '2026-01-01T00:00:01.000Z',
};

describe('toSnakeCase', () => {
  it.each([
    ['Order Completed', 'order_completed'],
    ['accountType', 'account_type'],
    ['HTMLParser', 'html_parser'],
    ['already_snake', 'already_snake'],
    ['  spaced  out  ', 'spaced_out'],
    ['a"b', 'a_b'],
    ["'); DROP TABLE x; --", 'drop_table_x'],
    ['Größe', 'größe'],
    ['!!!', ''],
    ['Product Number 15', 'product_number_15'],
  ])('%j → %j', (name, expected) => {
    expect(toSnakeCase(name)).toBe(expected);
  });

  it('truncates to 63 bytes without splitting a character', () => {
    const snake = toSnakeCase('é'.repeat(100));
    expect(Buffer.byteLength(snake, 'utf8')).toBeLessThanOrEqual(63);
    expect(snake).toBe('é'.repeat(31));
  });
});

describe('eventTableName', () => {
  it('keeps events out of the standard tables and never answers an empty name', () => {
    expect(eventTableName('Signed Up')).toBe('signed_up');
    expect(eventTableName('Tracks')).toBe('tracks_event');
    expect(eventTableName('users')).toBe('users_event');
    expect(eventTableName('')).toBe('unnamed_event');
  });
});

describe('planWarehouseRows', () => {
  it('puts a track in tracks and in its event table, with properties only in the latter', () => {
    const message = normalizedMessageSchema.parse({
      ...common,
      type: 'track',
      event: 'Order Completed',
      properties: {
        total: 5,
        nested: { deep: { value: 'x' } },
        list: [1, 2],
        gone: null,
        user_id: 'spoof',
        id: 'spoof',
      },
      context: { library: { name: 'lib' } },
    });
    const plan = planWarehouseRows(message, 'source-1');

    expect(plan.primary.table).toBe('tracks');
    expect({ ...plan.primary.values }).toEqual({
      id: 'm-1',
      received_at: common.receivedAt,
      timestamp: common.timestamp,
      source_id: 'source-1',
      user_id: 'u-1',
      event: 'order_completed',
      event_text: 'Order Completed',
      context_library_name: 'lib',
    });
    expect(plan.eventRow?.table).toBe('order_completed');
    expect({ ...plan.eventRow!.values }).toMatchObject({
      id: 'm-1',
      user_id: 'u-1',
      total: 5,
      nested_deep_value: 'x',
      list: '[1,2]',
    });
    expect(Object.hasOwn(plan.eventRow!.values, 'gone')).toBe(false);
    expect(plan.userRow).toBeUndefined();
  });

  it('upserts users from an identify with a user id only, keyed by user and source', () => {
    const identifyMessage = normalizedMessageSchema.parse({
      ...common,
      type: 'identify',
      traits: { plan: 'pro' },
    });
    expect(planWarehouseRows(identifyMessage, 'source-1').userRow!.values).toMatchObject({
      id: 'u-1',
      source_id: 'source-1',
    });
    const identified = planWarehouseRows(identifyMessage);
    expect(identified.primary.table).toBe('identifies');
    expect({ ...identified.userRow!.values }).toEqual({
      id: 'u-1',
      source_id: '',
      received_at: common.receivedAt,
      timestamp: common.timestamp,
      plan: 'pro',
    });

    const { userId: _userId, ...anonymous } = common;
    const anonymousPlan = planWarehouseRows(
      normalizedMessageSchema.parse({
        ...anonymous,
        anonymousId: 'a-1',
        type: 'identify',
        traits: { plan: 'pro' },
      }),
    );
    expect(anonymousPlan.userRow).toBeUndefined();
  });

  it('maps page, screen, group and alias to their tables and fields', () => {
    const page = planWarehouseRows(
      normalizedMessageSchema.parse({
        ...common,
        type: 'page',
        name: 'Home',
        properties: { name: 'shadow', url: 'u' },
      }),
    );
    expect(page.primary.table).toBe('pages');
    expect(page.primary.values['name']).toBe('Home');
    expect(page.primary.values['url']).toBe('u');
    expect(
      planWarehouseRows(normalizedMessageSchema.parse({ ...common, type: 'screen' })).primary.table,
    ).toBe('screens');
    const group = planWarehouseRows(
      normalizedMessageSchema.parse({ ...common, type: 'group', groupId: 'g', traits: { size: 3 } }),
    );
    expect([group.primary.table, group.primary.values['group_id'], group.primary.values['size']]).toEqual([
      'groups',
      'g',
      3,
    ]);
    const alias = planWarehouseRows(
      normalizedMessageSchema.parse({ ...common, type: 'alias', previousId: 'old' }),
    );
    expect([alias.primary.table, alias.primary.values['previous_id']]).toEqual(['aliases', 'old']);
  });
});

describe('column types', () => {
  it('infers the type of a new column from its first value', () => {
    expect(inferColumnType(true)).toBe('boolean');
    expect(inferColumnType(1.5)).toBe('double precision');
    expect(inferColumnType('2026-01-01T00:00:00Z')).toBe('timestamptz');
    expect(inferColumnType('2026-01-01T00:00:00.123456+05:30')).toBe('timestamptz');
    expect(inferColumnType('2026-01-01')).toBe('text');
    expect(inferColumnType('hello')).toBe('text');
  });

  it('recognises ISO date-times only', () => {
    expect(isIsoDateTime('2012-03-04T05:06:07.891011')).toBe(true);
    expect(isIsoDateTime('2026-13-45T99:99:99Z')).toBe(false);
    expect(isIsoDateTime('yesterday')).toBe(false);
  });

  it('answers canonical UTC timestamps as the full check does, with or without its shortcut', () => {
    // The shortcut must never accept what `Date.parse` refuses: every field, in and out of range.
    const fullCheck = (value: string) =>
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) && !Number.isNaN(Date.parse(value));
    const pad = (value: number) => String(value).padStart(2, '0');
    for (let month = 0; month <= 13; month += 1)
      for (const day of [0, 1, 15, 28, 29, 30, 31, 32])
        for (const hour of [0, 12, 23, 24, 25])
          for (const minute of [0, 59, 60])
            for (const second of [0, 59, 60]) {
              const value = `2026-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}.123Z`;
              expect([value, isIsoDateTime(value)]).toEqual([value, fullCheck(value)]);
            }
    expect(isIsoDateTime('2026-01-02T03:04:05.678Z')).toBe(true);
    expect(isIsoDateTime('2026-01-02T03:04:05.678z')).toBe(true);
    expect(isIsoDateTime('2026-0a-02T03:04:05.678Z')).toBe(false);
  });

  it('widens where nothing is lost and refuses the rest with a reason', () => {
    expect(fitValueToColumn('c', 'text', 5)).toEqual({ fits: true, value: '5' });
    expect(fitValueToColumn('c', 'number', ' 2.5 ')).toEqual({ fits: true, value: '2.5' });
    expect(fitValueToColumn('c', 'boolean', 'TRUE')).toEqual({ fits: true, value: true });
    expect(fitValueToColumn('c', 'timestamp', '2026-01-01T00:00:00Z')).toEqual({
      fits: true,
      value: '2026-01-01T00:00:00Z',
    });
    expect(fitValueToColumn('c', 'json', 'x')).toEqual({ fits: true, value: '"x"' });

    expect(fitValueToColumn('amount', 'number', 'lots')).toEqual({
      fits: false,
      reason: 'column "amount" holds numbers, but the message has string "lots"',
    });
    expect(fitValueToColumn('c', 'number', true)).toMatchObject({ fits: false });
    expect(fitValueToColumn('c', 'boolean', 1)).toMatchObject({ fits: false });
    expect(fitValueToColumn('c', 'timestamp', 'soon')).toMatchObject({ fits: false });
  });
});
