// Consumer groups: state, coordinator, members with their assignment, and
// per partition the committed offset, the high watermark and the lag. With
// --console-admin an empty group can be deleted.

import { fill, h, table, type Child } from './dom.js';
import type { GroupRow } from './model.js';
import { errorText, type Ctx, type Snapshot, type View } from './context.js';

function deleteButton(ctx: Ctx, g: GroupRow, status: HTMLElement): Child {
  if (!ctx.config.admin || g.state !== 'Empty') return null;
  return h('button', {
    class: 'admin delete-group', 'data-group': g.groupId,
    onclick: () => {
      ctx.admin.deleteGroups([g.groupId]).then(([r]) => {
        status.textContent = r?.error ? `${g.groupId} not deleted: ${r.error.message}` : `${g.groupId} deleted`;
        return ctx.refresh();
      }).catch((err: unknown) => { status.textContent = `delete failed: ${errorText(err)}`; });
    },
  }, 'Delete group');
}

function groupSection(ctx: Ctx, g: GroupRow, status: HTMLElement): HTMLElement {
  return h('article', { class: 'group', 'data-group': g.groupId },
    h('h3', {}, g.groupId, ' ', h('span', { class: `state state-${g.state.toLowerCase()}` }, g.state), ' ', deleteButton(ctx, g, status)),
    h('p', {}, 'coordinator ', h('span', { class: 'coordinator' }, g.coordinator), ' · ', h('span', { class: 'member-count' }, g.members.length), ' members · total lag ',
      h('span', { class: 'total-lag' }, g.totalLag ?? '–'), g.protocol ? ` · assignor ${g.protocol}` : ''),
    table({ class: 'members' }, ['Member', 'Client', 'Host', 'Assignment'], g.members.map((m) => ({
      attrs: { 'data-member': m.memberId },
      cells: [m.memberId, m.clientId, m.clientHost, h('span', { class: 'assignment' }, m.assignment.join(' '))],
    })), 'no members'),
    table({ class: 'offsets' }, ['Topic', 'Partition', 'Committed', 'High watermark', 'Lag'], g.offsets.map((o) => ({
      attrs: { 'data-topic': o.topic, 'data-partition': o.partition },
      cells: [o.topic, o.partition, o.committedOffset, o.logEndOffset, h('span', { class: 'lag' }, o.lag ?? '–')],
    })), 'nothing committed'));
}

export function groupsView(ctx: Ctx): View {
  const body = h('div', {});
  const status = h('p', { class: 'action-status', id: 'groups-action' });
  return {
    root: h('section', { id: 'view-groups' }, h('h2', {}, 'Consumer groups'), status, body),
    update(s: Snapshot) {
      if (!s.groups) return fill(body, h('p', { class: 'muted' }, 'groups not described (see the error above)'));
      fill(body, h('p', {}, h('span', { id: 'group-count' }, s.groups.length), ' groups'),
        ...(s.groups.length === 0 ? [h('p', { class: 'muted' }, 'no groups')] : s.groups.map((g) => groupSection(ctx, g, status))));
    },
    close() {},
  };
}
