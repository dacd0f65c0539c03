import { alreadyExists, Decider, invalidArgument, notFound } from '../shared/decider';
import { AccessTokenEvent, AccessTokenRecord } from './access-token.events';

export type AccessTokenState =
  | { status: 'absent' }
  | { status: 'active'; token: AccessTokenRecord }
  | { status: 'deleted'; token: AccessTokenRecord };

export type AccessTokenCommand =
  { type: 'CreateAccessToken'; token: AccessTokenRecord } | { type: 'DeleteAccessToken' };

export const accessTokenDecider: Decider<AccessTokenState, AccessTokenCommand, AccessTokenEvent> = {
  initialState: { status: 'absent' },

  decide(state, command) {
    switch (command.type) {
      case 'CreateAccessToken': {
        // A token number is never reused, even after its token was deleted.
        if (state.status !== 'absent')
          throw alreadyExists(`access-tokens/${command.token.number} already exists`);
        const { token } = command;
        if (!token.instanceAdmin && token.workspaceSlugs.length === 0) {
          throw invalidArgument('access_token.workspace_names must name at least one workspace');
        }
        return [{ type: 'AccessTokenCreated', data: token }];
      }
      case 'DeleteAccessToken':
        if (state.status !== 'active') throw notFound('access token not found');
        return [
          {
            type: 'AccessTokenDeleted',
            data: { number: state.token.number, workspaceSlugs: state.token.workspaceSlugs },
          },
        ];
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'AccessTokenCreated':
        return { status: 'active', token: event.data };
      case 'AccessTokenDeleted':
        return state.status === 'active' ? { status: 'deleted', token: state.token } : state;
    }
  },
};
