import { declaredEntries } from './function-code';

describe('declaredEntries', () => {
  it('finds the entries of the kind the code declares, as check does', () => {
    const code = `
      // async function onPage(event) {}
      /* const onScreen = () => {} */
      async function onTrack(event, settings) { return 1; }
      const onBatch = async (events) => events.map(() => ({ status: 200 }));
      function onRequest(request) {}
    `;
    expect(declaredEntries('DESTINATION', code)).toEqual(['onBatch', 'onTrack']);
    expect(declaredEntries('INSERT_DESTINATION', code)).toEqual(['onTrack']);
    expect(declaredEntries('SOURCE', code)).toEqual(['onRequest']);
  });

  it('does not take a call or a string for a declaration', () => {
    expect(declaredEntries('DESTINATION', `async function onTrack(e) { return onBatch([e]); }`)).toEqual([
      'onTrack',
    ]);
  });
});
