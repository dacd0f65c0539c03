import { given, stateAfter } from '../testing/given-when-then';
import { accessTokenDecider } from './access-token.decider';
import { AccessTokenEvent, AccessTokenRecord } from './access-token.events';

const ciToken: AccessTokenRecord = {
  number: 5,
  description: 'ci',
  scope: 'workspace',
  workspaceSlugs: ['example'],
  instanceAdmin: false,
  tokenHash: 'a'.repeat(64),
  createTime: '2018-10-12T22:36:39Z',
};
const tokenCreated: AccessTokenEvent = { type: 'AccessTokenCreated', data: ciToken };
const tokenDeleted: AccessTokenEvent = {
  type: 'AccessTokenDeleted',
  data: { number: 5, workspaceSlugs: ['example'] },
};

describe('access token decider', () => {
  describe('CreateAccessToken', () => {
    it('creates a token for the workspaces it names', () => {
      const { state } = given(accessTokenDecider)
        .when({ type: 'CreateAccessToken', token: ciToken })
        .then([tokenCreated]);
      expect(state).toEqual({ status: 'active', token: ciToken });
    });

    it('creates a read-only token', () => {
      const readOnly = { ...ciToken, scope: 'workspace:read' as const };
      given(accessTokenDecider)
        .when({ type: 'CreateAccessToken', token: readOnly })
        .then([{ type: 'AccessTokenCreated', data: readOnly }]);
    });

    it('refuses a token that reaches no workspace with invalid_argument', () => {
      given(accessTokenDecider)
        .when({ type: 'CreateAccessToken', token: { ...ciToken, workspaceSlugs: [] } })
        .thenThrows('invalid_argument', 'access_token.workspace_names must name at least one workspace');
    });

    it('lets an instance-admin token name no workspace: it reaches all of them', () => {
      const adminToken = { ...ciToken, workspaceSlugs: [], instanceAdmin: true };
      given(accessTokenDecider)
        .when({ type: 'CreateAccessToken', token: adminToken })
        .then([{ type: 'AccessTokenCreated', data: adminToken }]);
    });

    it('refuses a second token under a number in use with already_exists', () => {
      given(accessTokenDecider, [tokenCreated])
        .when({ type: 'CreateAccessToken', token: { ...ciToken, description: 'other' } })
        .thenThrows('already_exists', 'access-tokens/5 already exists');
    });

    it('never reuses the number of a deleted token', () => {
      given(accessTokenDecider, [tokenCreated, tokenDeleted])
        .when({ type: 'CreateAccessToken', token: { ...ciToken, tokenHash: 'b'.repeat(64) } })
        .thenThrows('already_exists', 'access-tokens/5 already exists');
    });
  });

  describe('DeleteAccessToken', () => {
    it('deletes an active token, naming the workspaces it reached', () => {
      const { state } = given(accessTokenDecider, [tokenCreated])
        .when({ type: 'DeleteAccessToken' })
        .then([tokenDeleted]);
      expect(state).toEqual({ status: 'deleted', token: ciToken });
    });

    it('refuses to delete a token that never existed with not_found', () => {
      given(accessTokenDecider)
        .when({ type: 'DeleteAccessToken' })
        .thenThrows('not_found', 'access token not found');
    });

    it('refuses to delete a token twice with not_found', () => {
      given(accessTokenDecider, [tokenCreated, tokenDeleted])
        .when({ type: 'DeleteAccessToken' })
        .thenThrows('not_found', 'access token not found');
    });
  });

  it('ignores a deletion without a created token when folding', () => {
    expect(stateAfter(accessTokenDecider, [tokenDeleted])).toEqual({ status: 'absent' });
  });
});
