import { expect } from 'chai';
import { ACCESS_RULES } from '../../src/security/access-rules.js';
import { KAFKA_HANDLERS } from '../../src/server/kafka/handlers.js';
import { SUPPORTED_APIS } from '../../src/server/broker-api.js';
import { authorizerConfigFrom } from '../../src/server/config.js';
import { bindingsToAdd, filtersOf } from '../../src/cli/commands/acls.js';
import { AclOperation as Op, AclPermission, PatternType, ResourceType, type AclBinding } from '../../src/security/acl.js';
import { AclIndex, Authorizer } from '../../src/security/authorizer.js';
import { parsePrincipal } from '../../src/security/principal.js';
import { RequestAccess } from '../../src/server/access-control.js';
import { Errors, type SluiceError } from '../../src/util/errors.js';

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

  it('names the transaction APIs\' operations as Kafka\'s KafkaApis does', () => {
    expect(ACCESS_RULES.get(0), 'Produce with a transactional id').to.include({ topic: Op.WRITE, transactionalId: Op.WRITE });
    expect(ACCESS_RULES.get(10), 'FindCoordinator key type 1').to.include({ transactionalId: Op.DESCRIBE });
    expect(ACCESS_RULES.get(22), 'InitProducerId: Write on the id instead of IdempotentWrite').to.include({ transactionalId: Op.WRITE, clusterUnlessTransactional: true });
    expect(ACCESS_RULES.get(24)).to.include({ transactionalId: Op.WRITE, topic: Op.WRITE, replica: Op.CLUSTER_ACTION });
    expect(ACCESS_RULES.get(25)).to.include({ transactionalId: Op.WRITE, group: Op.READ });
    expect(ACCESS_RULES.get(26)).to.include({ transactionalId: Op.WRITE });
    expect(ACCESS_RULES.get(27)).to.include({ cluster: Op.CLUSTER_ACTION });
    expect(ACCESS_RULES.get(28)).to.include({ transactionalId: Op.WRITE, group: Op.READ, topic: Op.READ });
    expect(ACCESS_RULES.get(65)).to.include({ transactionalId: Op.DESCRIBE, topic: Op.DESCRIBE });
    expect(ACCESS_RULES.get(66)).to.include({ transactionalId: Op.DESCRIBE });
    for (const key of [24, 25, 26, 28, 65, 66]) expect(ACCESS_RULES.get(key)!.cluster, `key ${key}: nothing request-wide on the cluster`).to.equal(undefined);
  });
});

describe('server/access-control: the transactional id checks (a real authorizer)', () => {
  const alice = parsePrincipal('User:alice');
  const allow = (resourceType: AclBinding['resourceType'], resourceName: string, operation: AclBinding['operation'], patternType: AclBinding['patternType'] = PatternType.LITERAL): AclBinding => ({
    resourceType, resourceName, patternType, principal: 'User:alice', host: '*', operation, permissionType: AclPermission.ALLOW,
  });
  const access = (bindings: AclBinding[]): RequestAccess => new RequestAccess(new Authorizer({ superUsers: [], allowEveryoneIfNoAclFound: false }, new AclIndex(bindings)), alice, '::ffff:10.0.0.1');
  const codeOf = (f: () => void): number => {
    try {
      f();
      return 0;
    } catch (err) {
      return (err as SluiceError).code;
    }
  };

  it('InitProducerId: an idempotent producer needs IdempotentWrite (or Write on a topic); a transactional one Write on its id instead', () => {
    const none = access([]);
    expect(codeOf(() => none.checkRequest(22, 'InitProducerId', null)), 'idempotent, no ACL').to.equal(Errors.CLUSTER_AUTHORIZATION_FAILED.code);
    expect(codeOf(() => none.checkRequest(22, 'InitProducerId', 'tx-1')), 'transactional: the request-wide check is left to the id').to.equal(0);
    expect(codeOf(() => none.requireTransactionalId(22, 'tx-1'))).to.equal(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code);
    const writer = access([allow(ResourceType.TRANSACTIONAL_ID, 'tx-', Op.WRITE, PatternType.PREFIXED)]);
    expect(codeOf(() => writer.requireTransactionalId(22, 'tx-1'))).to.equal(0);
    expect(codeOf(() => writer.checkRequest(22, 'InitProducerId', null)), 'Write on an id is not IdempotentWrite').to.equal(Errors.CLUSTER_AUTHORIZATION_FAILED.code);
    expect(codeOf(() => access([allow(ResourceType.CLUSTER, 'kafka-cluster', Op.IDEMPOTENT_WRITE)]).checkRequest(22, 'InitProducerId', null))).to.equal(0);
  });

  it('Write on a transactional id implies Describe (FindCoordinator, DescribeTransactions), not the other way round', () => {
    const writer = access([allow(ResourceType.TRANSACTIONAL_ID, 'tx-1', Op.WRITE)]);
    expect(writer.transactionalIdAllowed(10, 'tx-1')).to.equal(true);
    expect(writer.transactionalIdAllowed(65, 'tx-1')).to.equal(true);
    expect(writer.transactionalIdAllowed(26, 'tx-2'), 'another id').to.equal(false);
    const describer = access([allow(ResourceType.TRANSACTIONAL_ID, 'tx-1', Op.DESCRIBE)]);
    expect(describer.transactionalIdAllowed(66, 'tx-1')).to.equal(true);
    expect(describer.transactionalIdAllowed(26, 'tx-1'), 'EndTxn needs Write').to.equal(false);
    expect(describer.transactionalIdRefusal(26, 'tx-1')).to.deep.equal({
      errorCode: Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code,
      errorMessage: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED: User:alice may not write to transactional id tx-1',
    });
    expect(access([allow(ResourceType.TOPIC, 'tx-1', Op.ALL)]).transactionalIdAllowed(26, 'tx-1'), 'a topic of the same name is another resource').to.equal(false);
  });

  it('WriteTxnMarkers is a node\'s request: ClusterAction on the cluster, request-wide', () => {
    expect(codeOf(() => access([allow(ResourceType.CLUSTER, 'kafka-cluster', Op.ALTER)]).checkRequest(27, 'WriteTxnMarkers'))).to.equal(Errors.CLUSTER_AUTHORIZATION_FAILED.code);
    expect(codeOf(() => access([allow(ResourceType.CLUSTER, 'kafka-cluster', Op.CLUSTER_ACTION)]).checkRequest(27, 'WriteTxnMarkers'))).to.equal(0);
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
