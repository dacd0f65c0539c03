import type { AccessTokenRecord, ConfigEvent } from '@tributary/config-domain';
import { given } from '../testing/given-events';
import {
  accessTokenByHash,
  accessTokenByNumber,
  accessTokensProjection,
  allAccessTokens,
  nextAccessTokenNumber,
} from './access-tokens.projection';

const token = (number: number): AccessTokenRecord => ({
  number,
  description: `token ${number}`,
  scope: 'workspace',
  workspaceSlugs: ['ws'],
  instanceAdmin: false,
  tokenHash: `hash-${number}`,
  createTime: '2026-01-01T00:00:00.000Z',
});
const created = (number: number): ConfigEvent => ({ type: 'AccessTokenCreated', data: token(number) });
const deleted = (number: number): ConfigEvent => ({
  type: 'AccessTokenDeleted',
  data: { number, workspaceSlugs: ['ws'] },
});

describe('access tokens projection', () => {
  it('finds a token by the hash of its secret and by its number', () => {
    const { view } = given(accessTokensProjection, [created(1), created(2)]);
    expect(accessTokenByHash(view, 'hash-2')).toEqual(token(2));
    expect(accessTokenByNumber(view, 1)).toEqual(token(1));
    expect(allAccessTokens(view)).toEqual([token(1), token(2)]);
  });

  it('forgets a deleted token by hash and by number', () => {
    const { view } = given(accessTokensProjection, [created(1), created(2), deleted(1)]);
    expect(accessTokenByHash(view, 'hash-1')).toBeUndefined();
    expect(accessTokenByNumber(view, 1)).toBeUndefined();
    expect(allAccessTokens(view)).toEqual([token(2)]);
  });

  it('never hands out a number again, even the number of a deleted token', () => {
    expect(nextAccessTokenNumber(given(accessTokensProjection).view)).toBe(1);
    expect(nextAccessTokenNumber(given(accessTokensProjection, [created(1), created(7)]).view)).toBe(8);
    expect(
      nextAccessTokenNumber(given(accessTokensProjection, [created(1), created(7), deleted(7)]).view),
    ).toBe(8);
  });

  it('ignores the deletion of a token it does not hold, and tells listeners nothing', () => {
    const { view, changes } = given(accessTokensProjection, [created(1)]).when(deleted(5));
    expect(allAccessTokens(view)).toEqual([token(1)]);
    expect(changes).toEqual([]);
  });
});
