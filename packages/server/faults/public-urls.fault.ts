import { describe, expect, it } from 'vitest';
import { signup, startLink } from '../test/helpers/accounts';
import { Api } from '../test/helpers/api';
import { Harness } from '../test/helpers/factories';
import { useDeployment } from './support/deployment';
import { report } from './support/figures';

/**
 * Two nodes with different PUBLIC_URLs on one PostgreSQL: every dashboard, token and
 * key-recovery operation works on either node with a session minted by either, and still does
 * after a node restarts (the deployment's signing key lives in the database).
 */
describe('two nodes with different PUBLIC_URLs', () => {
  const deployment = useDeployment();

  it('accept a session from either node for every dashboard, token and key-recovery operation', async () => {
    const a = await deployment.start({ publicUrl: 'https://a.convene.test' });
    const b = await deployment.start({ publicUrl: 'https://b.convene.test' });
    const onA = new Harness(a.url);
    const onB = new Api(b.url);
    const human = await signup(onA);
    const login = await onB.post('/hub/auth/login', {
      body: { email: human.email, password: human.password },
    });
    expect(login.status).toBe(200);
    const sessions = {
      'minted by A': human.auth,
      'minted by B': { Authorization: `Bearer ${login.body.token}` },
    };
    // A space created with one of the human's tokens, so that its key can be recovered.
    const token = await onA.post('/hub/me/tokens', { headers: human.auth, body: { name: 'creator' } });
    const space = await onA.createSpace({}, { 'X-User-Token': token.body.token });

    const checks: string[] = [];
    const failures: string[] = [];
    const check = (what: string, ok: boolean) => {
      checks.push(what);
      if (!ok) failures.push(what);
    };
    /** Each operation on each node (its link flows started on `other`), with each session. */
    const everyOperation = async (nodes: [string, Api, Api][]) => {
      for (const [nodeName, api, other] of nodes) {
        for (const [sessionName, auth] of Object.entries(sessions)) {
          const on = `on ${nodeName} with a session ${sessionName}`;
          const me = await api.get('/hub/me', { headers: auth });
          check(`getMe ${on}`, me.status === 200 && me.body.id === human.id);
          const mine = await api.get('/hub/me/spaces', { headers: auth });
          check(
            `listMySpaces ${on}`,
            mine.status === 200 && JSON.stringify(mine.body).includes(space.spaceId),
          );
          const key = await api.get(`/hub/space/${space.spaceId}/key`, { headers: auth });
          check(`getMySpaceKey ${on}`, key.status === 200 && key.body.privateKey === space.ownerKey);
          const minted = await api.post('/hub/me/tokens', { headers: auth, body: { name: on } });
          check(`createApiToken ${on}`, minted.status === 201);
          const listed = await api.get('/hub/me/tokens', { headers: auth });
          check(
            `listApiTokens ${on}`,
            listed.status === 200 && JSON.stringify(listed.body).includes(minted.body.id),
          );
          const revoked = await api.delete(`/hub/me/tokens/${minted.body.id}`, { headers: auth });
          check(`revokeApiToken ${on}`, revoked.status === 204);
          // The browser-link flow, started on the other node.
          const link = await startLink(other, on);
          const request = await api.get(`/hub/me/link/${link.userCode}`, { headers: auth });
          check(`getLinkRequest ${on}`, request.status === 200);
          const approved = await api.post('/hub/me/link/approve', {
            headers: auth,
            body: { userCode: link.userCode },
          });
          check(`approveLink ${on}`, approved.status === 200);
          const poll = await other.post('/hub/link/poll', { body: { deviceCode: link.deviceCode } });
          check(`pollLink after approveLink ${on}`, poll.status === 200 && poll.body.status === 'approved');
          const denied = await startLink(other, on);
          const deny = await api.post('/hub/me/link/deny', {
            headers: auth,
            body: { userCode: denied.userCode },
          });
          check(`denyLink ${on}`, deny.status === 200);
        }
      }
    };
    await everyOperation([
      ['A', onA, onB],
      ['B', onB, onA],
    ]);

    // A restarted node still accepts both sessions.
    await a.stop();
    const again = await deployment.start({ port: a.port, publicUrl: 'https://a.convene.test' });
    await everyOperation([['A restarted', new Api(again.url), onB]]);

    report('two nodes with different PUBLIC_URLs', { checks: checks.length, failed: failures.length });
    expect(failures).toEqual([]);
    expect(checks.length).toBeGreaterThanOrEqual(60);
  }, 180_000);
});
