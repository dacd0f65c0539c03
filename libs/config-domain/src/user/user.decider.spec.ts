import { given } from '../testing/given-when-then';
import { userDecider } from './user.decider';
import { UserRecord } from './user.events';

const admin: UserRecord = {
  email: 'admin@example.com',
  passwordHash: 'scrypt$c2FsdA$aGFzaA',
  instanceAdmin: true,
};

describe('user decider', () => {
  it('registers a user who does not exist yet', () => {
    const { state } = given(userDecider)
      .when({ type: 'RegisterUser', user: admin })
      .then([{ type: 'UserRegistered', data: admin }]);
    expect(state).toEqual({ status: 'registered', user: admin });
  });

  it('refuses registering the same user twice with already_exists, naming the email', () => {
    given(userDecider, [{ type: 'UserRegistered', data: admin }])
      .when({
        type: 'RegisterUser',
        user: { ...admin, passwordHash: 'scrypt$b3RoZXI$b3RoZXI', instanceAdmin: false },
      })
      .thenThrows('already_exists', 'user admin@example.com already exists');
  });

  it('keeps only the password hash in the event, never a password field', () => {
    const { events } = given(userDecider)
      .when({ type: 'RegisterUser', user: admin })
      .then([{ type: 'UserRegistered', data: admin }]);
    expect(Object.keys(events[0].data).sort()).toEqual(['email', 'instanceAdmin', 'passwordHash']);
  });
});
