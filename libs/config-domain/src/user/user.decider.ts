import { alreadyExists, Decider } from '../shared/decider';
import { UserEvent, UserRecord } from './user.events';

export type UserState = { status: 'absent' } | { status: 'registered'; user: UserRecord };
export type UserCommand = { type: 'RegisterUser'; user: UserRecord };

export const userDecider: Decider<UserState, UserCommand, UserEvent> = {
  initialState: { status: 'absent' },
  decide(state, command) {
    if (state.status === 'registered') throw alreadyExists(`user ${command.user.email} already exists`);
    return [{ type: 'UserRegistered', data: command.user }];
  },
  evolve(_state, event) {
    return { status: 'registered', user: event.data };
  },
};
