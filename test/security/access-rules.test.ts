import { expect } from 'chai';
import { ACCESS_RULES } from '../../src/security/access-rules.js';
import { KAFKA_HANDLERS } from '../../src/server/kafka/handlers.js';
import { SUPPORTED_APIS } from '../../src/server/broker-api.js';
import { authorizerConfigFrom } from '../../src/server/config.js';
import { bindingsToAdd, filtersOf } from '../../src/cli/commands/acls.js';
import { AclOperation as Op, AclPermission, PatternType, ResourceType } from '../../src/security/acl.js';

describe('security/access-rules: one table for both protocols', () => {
  it('has a rule for every API either client listener serves (an API without one would be refused outright)', () => {
    const served = [...KAFKA_HANDLERS.keys(), ...SUPPORTED_APIS.map((a) => a.apiKey)];
    expect(served.filter((k) => !ACCESS_RULES.has(k))).to.deep.equal([]);
    for (const [key, h] of KAFKA_HANDLERS) expect(ACCESS_RULES.get(key)!.api, `key ${key}`).to.equal(h.spec.name);
  });

  it('names every data and admin API\'s operation as Kafka does', () => {
    expect(ACCESS_RULES.get(0)).to.include({ topic: Op.WRITE });
    expect(ACCESS_RULES.get(1)).to.include({ topic: Op.READ, replica: Op.CLUSTER_ACTION });
    expect(ACCESS_RULES.get(19)).to.include({ topic: Op.CREATE, clusterCovers: Op.CREATE });
    expect(ACCESS_RULES.get(22)).to.include({ cluster: Op.IDEMPOTENT_WRITE, orAnyTopic: Op.WRITE });
    expect(ACCESS_RULES.get(30)).to.include({ cluster: Op.ALTER });
    expect(ACCESS_RULES.get(62)).to.include({ cluster: Op.CLUSTER_ACTION });
  });
});

describe('server/config: the authorizer settings', () => {
  it('accepts Sluice\'s and Kafka\'s authorizer names, super.users in Kafka\'s ;-form, and refuses the rest', () => {
    expect(authorizerConfigFrom({})).to.equal(null);
    expect(authorizerConfigFrom({ authorizer: 'org.apache.kafka.metadata.authorizer.StandardAuthorizer', superUsers: 'User:admin; User:CN=broker,O=x' }))
      .to.deep.equal({ superUsers: ['User:admin', 'User:CN=broker,O=x'], allowEveryoneIfNoAclFound: false });
    expect(authorizerConfigFrom({ authorizer: 'acl', allowEveryoneIfNoAclFound: true })).to.deep.equal({ superUsers: [], allowEveryoneIfNoAclFound: true });
    expect(() => authorizerConfigFrom({ authorizer: 'kafka.security.authorizer.AclAuthorizer' })).to.throw(/must be one of/);
    expect(() => authorizerConfigFrom({ superUsers: 'User:a' })).to.throw(/need an authorizer/);
    expect(() => authorizerConfigFrom({ authorizer: 'acl', superUsers: 'admin' })).to.throw(/super.users/);
  });
});

describe('cli/acls: kafka-acls-style flags', () => {
  const base = { cluster: false, bootstrap: 'ws://x', json: false } as never;
  it('adds every resource × principal × operation, and refuses incomplete or bad flags', () => {
    const made = bindingsToAdd({ ...(base as object), allowPrincipal: ['User:a'], denyPrincipal: ['User:b'], operation: ['Read', 'describe'], topic: ['t'], group: ['g'] } as never);
    expect(made).to.have.length(8);
    expect(made.filter((b) => b.permissionType === AclPermission.DENY)).to.have.length(4);
    expect(() => bindingsToAdd({ ...(base as object), allowPrincipal: ['User:a'], operation: ['Read'] } as never)).to.throw(/Name a resource/);
    expect(() => bindingsToAdd({ ...(base as object), operation: ['Read'], topic: ['t'] } as never)).to.throw(/Name who/);
    expect(() => bindingsToAdd({ ...(base as object), allowPrincipal: ['alice'], operation: ['Read'], topic: ['t'] } as never)).to.throw(/Type:name/);
    expect(() => bindingsToAdd({ ...(base as object), allowPrincipal: ['User:a'], operation: ['Fly'], topic: ['t'] } as never)).to.throw(/unknown operation/);
    expect(() => bindingsToAdd({ ...(base as object), allowPrincipal: ['User:a'], operation: ['Read'], topic: ['t'], resourcePatternType: 'match' } as never)).to.throw(/literal or prefixed/);
  });

  it('lists everything without resources, and removes only named resources', () => {
    expect(filtersOf(base, false)).to.deep.equal([{ resourceType: ResourceType.ANY, resourceName: null, patternType: PatternType.ANY, principal: null, host: null, operation: Op.ANY, permissionType: AclPermission.ANY }]);
    expect(() => filtersOf(base, true)).to.throw(/Name the resource/);
    expect(filtersOf({ ...(base as object), cluster: true } as never, true)[0]).to.include({ resourceType: ResourceType.CLUSTER, resourceName: 'kafka-cluster', patternType: PatternType.LITERAL });
  });
});
