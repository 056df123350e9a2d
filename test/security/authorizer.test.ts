import { expect } from 'chai';
import fc from 'fast-check';
import {
  AclOperation as Op, AclPermission, PatternType, ResourceType, bindingProblem, filterMatches, operationCovers,
  parseOperation, MATCH_ALL_FILTER, type AclBinding, type AclOperationCode,
} from '../../src/security/acl.js';
import { AclIndex, Authorizer, type AuthorizerConfig } from '../../src/security/authorizer.js';
import { parsePrincipal } from '../../src/security/principal.js';

const alice = parsePrincipal('User:alice');
const bob = parsePrincipal('User:bob');
const HOST = '10.0.0.1';

function acl(over: Partial<AclBinding>): AclBinding {
  return {
    resourceType: ResourceType.TOPIC, resourceName: 'orders', patternType: PatternType.LITERAL,
    principal: 'User:alice', host: '*', operation: Op.READ, permissionType: AclPermission.ALLOW, ...over,
  };
}

const CONFIG: AuthorizerConfig = { superUsers: ['User:admin'], allowEveryoneIfNoAclFound: false };
const authz = (bindings: AclBinding[], config: Partial<AuthorizerConfig> = {}): Authorizer => new Authorizer({ ...CONFIG, ...config }, new AclIndex(bindings));

describe('security/authorizer: Kafka\'s ACL rules', () => {
  it('allows what a literal ACL grants and nothing else', () => {
    const a = authz([acl({})]);
    expect(a.authorize(alice, HOST, Op.READ, ResourceType.TOPIC, 'orders')).to.equal(true);
    expect(a.authorize(alice, HOST, Op.WRITE, ResourceType.TOPIC, 'orders')).to.equal(false);
    expect(a.authorize(alice, HOST, Op.READ, ResourceType.TOPIC, 'orders2')).to.equal(false);
    expect(a.authorize(bob, HOST, Op.READ, ResourceType.TOPIC, 'orders')).to.equal(false);
    expect(a.authorize(alice, HOST, Op.READ, ResourceType.GROUP, 'orders')).to.equal(false);
  });

  it('matches prefixed patterns, the literal * resource, User:* and hosts', () => {
    const a = authz([
      acl({ patternType: PatternType.PREFIXED, resourceName: 'sales-' }),
      acl({ resourceName: '*', operation: Op.DESCRIBE, principal: 'User:*' }),
      acl({ resourceType: ResourceType.GROUP, resourceName: 'g', host: '10.0.0.9' }),
    ]);
    expect(a.authorize(alice, HOST, Op.READ, ResourceType.TOPIC, 'sales-eu')).to.equal(true);
    expect(a.authorize(alice, HOST, Op.READ, ResourceType.TOPIC, 'sale')).to.equal(false);
    expect(a.authorize(bob, HOST, Op.DESCRIBE, ResourceType.TOPIC, 'anything')).to.equal(true);
    expect(a.authorize(alice, HOST, Op.READ, ResourceType.GROUP, 'g')).to.equal(false);
    expect(a.authorize(alice, '10.0.0.9', Op.READ, ResourceType.GROUP, 'g')).to.equal(true);
  });

  it('lets a deny win over any allow, even All', () => {
    const a = authz([
      acl({ operation: Op.ALL }),
      acl({ patternType: PatternType.PREFIXED, resourceName: 'ord', operation: Op.WRITE, permissionType: AclPermission.DENY }),
    ]);
    expect(a.authorize(alice, HOST, Op.READ, ResourceType.TOPIC, 'orders')).to.equal(true);
    expect(a.authorize(alice, HOST, Op.WRITE, ResourceType.TOPIC, 'orders')).to.equal(false);
  });

  it('implies Describe from Read/Write/Delete/Alter and DescribeConfigs from AlterConfigs, for allows only', () => {
    for (const op of [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER]) {
      expect(authz([acl({ operation: op })]).authorize(alice, HOST, Op.DESCRIBE, ResourceType.TOPIC, 'orders'), `${op}`).to.equal(true);
    }
    expect(authz([acl({ operation: Op.CREATE })]).authorize(alice, HOST, Op.DESCRIBE, ResourceType.TOPIC, 'orders')).to.equal(false);
    expect(authz([acl({ operation: Op.ALTER_CONFIGS })]).authorize(alice, HOST, Op.DESCRIBE_CONFIGS, ResourceType.TOPIC, 'orders')).to.equal(true);
    // A deny of Read does not deny Describe (Kafka: implications are for allows).
    const a = authz([acl({ operation: Op.DESCRIBE }), acl({ permissionType: AclPermission.DENY })]);
    expect(a.authorize(alice, HOST, Op.DESCRIBE, ResourceType.TOPIC, 'orders')).to.equal(true);
    expect(a.authorize(alice, HOST, Op.READ, ResourceType.TOPIC, 'orders')).to.equal(false);
  });

  it('lets super users do anything and applies allow.everyone.if.no.acl.found only where no ACL names the resource', () => {
    const a = authz([acl({ permissionType: AclPermission.DENY, principal: 'User:*', operation: Op.ALL })]);
    expect(a.authorize(parsePrincipal('User:admin'), HOST, Op.ALL, ResourceType.TOPIC, 'orders')).to.equal(true);
    expect(a.authorize(alice, HOST, Op.READ, ResourceType.TOPIC, 'orders')).to.equal(false);
    const open = authz([acl({ principal: 'User:bob' })], { allowEveryoneIfNoAclFound: true });
    expect(open.authorize(alice, HOST, Op.READ, ResourceType.TOPIC, 'other')).to.equal(true);
    expect(open.authorize(alice, HOST, Op.READ, ResourceType.TOPIC, 'orders')).to.equal(false);
    expect(authz([]).authorize(alice, HOST, Op.READ, ResourceType.TOPIC, 'other')).to.equal(false);
  });

  it('answers "on any resource of a type" as Kafka\'s authorizeByResourceType', () => {
    expect(authz([acl({ operation: Op.WRITE })]).authorizeAny(alice, HOST, Op.WRITE, ResourceType.TOPIC)).to.equal(true);
    expect(authz([acl({ operation: Op.READ })]).authorizeAny(alice, HOST, Op.WRITE, ResourceType.TOPIC)).to.equal(false);
    const denied = authz([acl({ operation: Op.WRITE }), acl({ resourceName: '*', operation: Op.WRITE, permissionType: AclPermission.DENY })]);
    expect(denied.authorizeAny(alice, HOST, Op.WRITE, ResourceType.TOPIC)).to.equal(false);
    const prefixDenied = authz([acl({ operation: Op.WRITE }), acl({ patternType: PatternType.PREFIXED, resourceName: 'or', operation: Op.WRITE, permissionType: AclPermission.DENY })]);
    expect(prefixDenied.authorizeAny(alice, HOST, Op.WRITE, ResourceType.TOPIC)).to.equal(false);
  });

  it('checks bindings as Kafka does before creating them', () => {
    expect(bindingProblem(acl({}))).to.equal(null);
    expect(bindingProblem(acl({ resourceType: ResourceType.ANY }))).to.match(/resource type/);
    expect(bindingProblem(acl({ patternType: PatternType.MATCH }))).to.match(/pattern type/);
    expect(bindingProblem(acl({ resourceType: ResourceType.CLUSTER, resourceName: 'x' }))).to.match(/kafka-cluster/);
    expect(bindingProblem(acl({ principal: 'alice' }))).to.match(/Type:name/);
    expect(bindingProblem(acl({ operation: Op.ANY }))).to.match(/cannot be granted/);
    expect(bindingProblem(acl({ permissionType: AclPermission.ANY }))).to.match(/Allow or Deny/);
    expect(parseOperation('describe-configs')).to.equal(Op.DESCRIBE_CONFIGS);
    expect(() => parseOperation('Fly')).to.throw(/unknown operation/);
  });

  it('filters bindings as DescribeAcls/DeleteAcls do (ANY, MATCH, exact)', () => {
    const prefixed = acl({ patternType: PatternType.PREFIXED, resourceName: 'ord' });
    const star = acl({ resourceName: '*' });
    const f = { ...MATCH_ALL_FILTER, resourceName: 'orders' };
    expect(filterMatches(MATCH_ALL_FILTER, prefixed)).to.equal(true);
    expect(filterMatches(f, prefixed)).to.equal(false);
    expect(filterMatches({ ...f, patternType: PatternType.MATCH }, prefixed)).to.equal(true);
    expect(filterMatches({ ...f, patternType: PatternType.MATCH }, star)).to.equal(true);
    expect(filterMatches({ ...f, patternType: PatternType.LITERAL }, acl({}))).to.equal(true);
    expect(filterMatches({ ...MATCH_ALL_FILTER, principal: 'User:bob' }, acl({}))).to.equal(false);
  });
});

describe('security/authorizer: properties', () => {
  const names = fc.constantFrom('orders', 'orders-eu', 'ord', 'logs', '*');
  const ops = fc.constantFrom<AclOperationCode>(Op.ALL, Op.READ, Op.WRITE, Op.CREATE, Op.DELETE, Op.ALTER, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS);
  const binding: fc.Arbitrary<AclBinding> = fc.record({
    resourceType: fc.constantFrom(ResourceType.TOPIC, ResourceType.GROUP),
    resourceName: names,
    patternType: fc.constantFrom(PatternType.LITERAL, PatternType.PREFIXED),
    principal: fc.constantFrom('User:alice', 'User:bob', 'User:*'),
    host: fc.constantFrom('*', HOST, '10.0.0.2'),
    operation: ops,
    permissionType: fc.constantFrom(AclPermission.ALLOW, AclPermission.DENY),
  }).filter((b) => bindingProblem(b) === null);
  const request = fc.record({
    who: fc.constantFrom(alice, bob), host: fc.constantFrom(HOST, '10.0.0.2'),
    op: ops.filter((o) => o !== Op.ALL), type: fc.constantFrom(ResourceType.TOPIC, ResourceType.GROUP),
    name: fc.constantFrom('orders', 'orders-eu', 'ord', 'logs'),
  });

  it('a matching deny always wins, whatever else is granted', () => {
    fc.assert(fc.property(fc.array(binding, { maxLength: 12 }), request, fc.boolean(), (bindings, r, open) => {
      const deny: AclBinding = acl({ resourceType: r.type, resourceName: r.name, principal: 'User:*', operation: r.op, permissionType: AclPermission.DENY });
      const a = authz([...bindings, deny], { allowEveryoneIfNoAclFound: open });
      expect(a.authorize(r.who, r.host, r.op, r.type, r.name)).to.equal(false);
    }));
  });

  it('allowed means some allow applies and no deny does (an oracle over the raw list)', () => {
    fc.assert(fc.property(fc.array(binding, { maxLength: 12 }), request, (bindings, r) => {
      const who = `User:${r.who.name}`;
      const applies = (b: AclBinding): boolean => b.resourceType === r.type
        && (b.patternType === PatternType.PREFIXED ? r.name.startsWith(b.resourceName) : b.resourceName === r.name || b.resourceName === '*')
        && (b.principal === who || b.principal === 'User:*') && (b.host === '*' || b.host === r.host)
        && operationCovers(b.operation, r.op, b.permissionType);
      const expected = !bindings.some((b) => applies(b) && b.permissionType === AclPermission.DENY)
        && bindings.some((b) => applies(b) && b.permissionType === AclPermission.ALLOW);
      expect(authz(bindings).authorize(r.who, r.host, r.op, r.type, r.name)).to.equal(expected);
    }));
  });

  it('adding an allow never removes access; adding a deny never grants it', () => {
    fc.assert(fc.property(fc.array(binding, { maxLength: 10 }), binding, request, (bindings, extra, r) => {
      const before = authz(bindings).authorize(r.who, r.host, r.op, r.type, r.name);
      const after = authz([...bindings, extra]).authorize(r.who, r.host, r.op, r.type, r.name);
      if (extra.permissionType === AclPermission.ALLOW && before) expect(after).to.equal(true);
      if (extra.permissionType === AclPermission.DENY && !before) expect(after).to.equal(false);
    }));
  });

  it('a super user is allowed everything, whatever the ACLs', () => {
    fc.assert(fc.property(fc.array(binding, { maxLength: 10 }), request, (bindings, r) => {
      expect(authz(bindings, { superUsers: [`User:${r.who.name}`] }).authorize(r.who, r.host, r.op, r.type, r.name)).to.equal(true);
    }));
  });
});
