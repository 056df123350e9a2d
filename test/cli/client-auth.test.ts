import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { saslOptionsFrom } from '../../src/cli/client-auth.js';

describe('cli/client-auth: how a client command logs in', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-auth-'));
  const file = (name: string, text: string): string => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, text);
    return f;
  };
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('takes flags over the environment over a --command-config file, and Java\'s sasl.jaas.config', () => {
    const cfg = file('c.properties', 'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="ann" password="pw";\n');
    expect(saslOptionsFrom({ commandConfig: cfg }, {})).to.deep.equal({ mechanism: 'SCRAM-SHA-512', username: 'ann', password: 'pw' });
    expect(saslOptionsFrom({ commandConfig: cfg }, { SLUICE_SASL_PASSWORD: 'env' })).to.deep.include({ password: 'env' });
    expect(saslOptionsFrom({ commandConfig: cfg, saslPassword: 'flag', saslMechanism: 'plain' }, { SLUICE_SASL_PASSWORD: 'env' })).to.deep.equal({ mechanism: 'PLAIN', username: 'ann', password: 'flag' });
    expect(saslOptionsFrom({}, {})).to.equal(undefined);
    expect(saslOptionsFrom({ commandConfig: file('p.properties', 'security.protocol=PLAINTEXT\nsasl.mechanism=PLAIN\n') }, {})).to.equal(undefined);
  });

  it('reads an OAUTHBEARER token from a file or the environment, and names what is missing', () => {
    expect(saslOptionsFrom({ saslMechanism: 'OAUTHBEARER', saslTokenFile: file('t.jwt', 'a.b.c\n') }, {})).to.deep.equal({ mechanism: 'OAUTHBEARER', token: 'a.b.c' });
    expect(saslOptionsFrom({ saslMechanism: 'OAUTHBEARER' }, { SLUICE_SASL_TOKEN: 'x.y.z' })).to.deep.equal({ mechanism: 'OAUTHBEARER', token: 'x.y.z' });
    expect(() => saslOptionsFrom({ saslMechanism: 'OAUTHBEARER' }, {})).to.throw(/needs a token/);
    expect(() => saslOptionsFrom({ saslMechanism: 'SCRAM-SHA-256', saslUsername: 'a' }, {})).to.throw(/needs a user name and a password/);
    expect(() => saslOptionsFrom({ saslMechanism: 'GSSAPI' }, {})).to.throw(/unknown SASL mechanism/);
    expect(() => saslOptionsFrom({ commandConfig: path.join(dir, 'missing') }, {})).to.throw(/cannot read it/);
    expect(() => saslOptionsFrom({ commandConfig: file('s.properties', 'security.protocol=SASL_SSL\n') }, {})).to.throw(/needs sasl.mechanism/);
  });
});
