import type { UserRecord } from '@tributary/config-domain';
import { given } from '../testing/given-events';
import { userByEmail, usersProjection } from './users.projection';

const admin: UserRecord = {
  email: 'Admin@Example.com',
  passwordHash: 'scrypt$c2FsdA$aGFzaA',
  instanceAdmin: true,
};

describe('users projection', () => {
  it('finds a registered user by email in any case', () => {
    const { view } = given(usersProjection, [{ type: 'UserRegistered', data: admin }]);
    expect(userByEmail(view, 'admin@example.com')).toEqual(admin);
    expect(userByEmail(view, 'ADMIN@EXAMPLE.COM')).toEqual(admin);
    expect(userByEmail(view, 'other@example.com')).toBeUndefined();
  });

  it('keeps the latest registration of an email and tells listeners nothing', () => {
    const again = { ...admin, email: 'admin@example.com', instanceAdmin: false };
    const { view, changes } = given(usersProjection, [{ type: 'UserRegistered', data: admin }]).when({
      type: 'UserRegistered',
      data: again,
    });
    expect(userByEmail(view, 'admin@example.com')).toEqual(again);
    expect(changes).toEqual([]);
  });
});
