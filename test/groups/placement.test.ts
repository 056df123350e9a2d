// Group placement must match Kafka's: Java's String.hashCode, Kafka's
// Utils.abs (Integer.MIN_VALUE → 0), modulo the partition count.

import { expect } from 'chai';
import { coordinatorPartition, javaStringHashCode, kafkaAbs } from '../../src/groups/placement.js';

describe('group placement', () => {
  it('hashes like java.lang.String.hashCode', () => {
    // Values as the JVM prints them ("hello".hashCode() etc.).
    expect(javaStringHashCode('')).to.equal(0);
    expect(javaStringHashCode('abc')).to.equal(96354);
    expect(javaStringHashCode('hello')).to.equal(99162322);
    expect(javaStringHashCode('hello world')).to.equal(1794106052);
    expect(javaStringHashCode('Aa')).to.equal(javaStringHashCode('BB'));
    expect(javaStringHashCode('polygenelubricants')).to.equal(-2147483648);
    expect(javaStringHashCode('my-group')).to.equal(-1906497762);
  });

  it('maps Integer.MIN_VALUE to 0 as Kafka\'s Utils.abs does', () => {
    expect(kafkaAbs(-2147483648)).to.equal(0);
    expect(kafkaAbs(-5)).to.equal(5);
    expect(coordinatorPartition('polygenelubricants', 50)).to.equal(0);
  });

  it('places groups on abs(hash) mod N', () => {
    expect(coordinatorPartition('hello', 50)).to.equal(22);
    expect(coordinatorPartition('my-group', 50)).to.equal(12);
    expect(coordinatorPartition('my-group', 3)).to.equal(1906497762 % 3);
    for (const id of ['a', 'b', 'group-42', 'grüppe']) expect(coordinatorPartition(id, 7)).to.be.within(0, 6);
  });
});
