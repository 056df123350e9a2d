import { expect } from 'chai';
import type { GroupDescription } from '../../src/client/group-admin.js';
import { renderGroupDescription, renderGroupList, renderReset, table } from '../../src/cli/groups-render.js';
import { targetOffset } from '../../src/cli/groups-reset.js';

describe('sluice groups: output and the reset rule', () => {
  it('aligns table columns', () => {
    expect(table(['A', 'BB'], [['xxx', '1'], ['y', '22']]).split('\n')).to.deep.equal(['A    BB', 'xxx  1', 'y    22']);
  });

  it('lists groups, or says there are none', () => {
    expect(renderGroupList([])).to.equal('(no groups)');
    expect(renderGroupList([{ groupId: 'g', state: 'Empty', protocolType: 'consumer' }])).to.match(/^GROUP\s+STATE\s+PROTOCOL-TYPE\ng\s+Empty\s+consumer$/);
  });

  it('describes offsets, lag and owners', () => {
    const g: GroupDescription = {
      groupId: 'billing', state: 'Stable', protocolType: 'consumer', protocol: 'cooperative-sticky', coordinator: 2,
      members: [{ memberId: 'm-1', groupInstanceId: null, clientId: 'cli', clientHost: '/127.0.0.1', subscription: ['orders'], assignment: [{ topic: 'orders', partitions: [1, 0] }] }],
      offsets: [
        { topic: 'orders', partition: 0, committedOffset: 5, metadata: null, logEndOffset: 7, lag: 2 },
        { topic: 'orders', partition: 1, committedOffset: -1, metadata: null, logEndOffset: 3, lag: null },
      ],
    };
    const text = renderGroupDescription(g);
    expect(text).to.contain('group billing: Stable, protocol cooperative-sticky, coordinator 2, 1 member(s)');
    expect(text).to.match(/orders\s+0\s+5\s+7\s+2\s+m-1/);
    expect(text).to.match(/orders\s+1\s+-\s+3\s+-\s+m-1/);
    expect(text).to.match(/m-1\s+cli\s+\/127\.0\.0\.1\s+orders:0,1/);
    expect(renderGroupDescription({ ...g, state: 'Empty', members: [], offsets: [] })).to.contain('(no committed offsets)');
  });

  it('renders a reset plan', () => {
    expect(renderReset([{ topic: 't', partition: 0, currentOffset: -1, newOffset: 4 }])).to.match(/t\s+0\s+-\s+4$/);
  });

  it('computes targets as GroupAdmin.resetOffsets does', () => {
    expect(targetOffset('earliest', 3, 9, -1)).to.equal(3);
    expect(targetOffset('latest', 3, 9, -1)).to.equal(9);
    expect(targetOffset({ offset: 1 }, 3, 9, -1)).to.equal(3);
    expect(targetOffset({ offset: 5 }, 3, 9, -1)).to.equal(5);
    expect(targetOffset({ offset: 50 }, 3, 9, -1)).to.equal(9);
    expect(targetOffset({ timestamp: 10 }, 3, 9, 6)).to.equal(6);
    expect(targetOffset({ timestamp: 10 }, 3, 9, -1)).to.equal(9);
  });
});
