// Views of the assistant mode (seed 004): which agent speaks, hand-offs
// and returns, the person's decision about held actions (a card outside the
// Steps panel whose buttons send the decision with the actions' ids), the
// planning agent's plan and the complex task's progress.
import { h, icon } from '../dom.js';
import { addStrings, t } from '../i18n.js';
import { registerPartView } from '../views.js';

addStrings({
  agent_router: 'Assistant', agent_knowledge: 'Knowledge agent', agent_interview: 'Interview agent',
  agent_planner: 'Planning agent', agent_task: 'Complex-task agent',
  asstSpeaking: 'speaks', asstHandoff: 'hands off to', asstReturn: 'returns control to', asstDelegate: 'delegates to',
  asstConfirmTitle: 'Confirm the action', asstYes: 'Yes, do it', asstNo: 'No',
  asstConfirmed: 'Confirmed', asstDeclined: 'Declined', asstPartial: 'Partly confirmed', asstPlan: 'Plan', asstTask: 'Complex task',
  asstTo: 'To', asstSubject: 'Subject', asstTime: 'Time', asstText: 'Text', asstHeld: 'Not done yet: waits for your decision',
  asstDecision_approve: 'done', asstDecision_confirm: 'waits for your confirmation', asstDecision_clarify: 'needs your answer', asstDecision_reject: 'cannot be done',
}, {
  agent_router: 'Ассистент', agent_knowledge: 'Агент знаний', agent_interview: 'Агент-интервьюер',
  agent_planner: 'Агент планирования', agent_task: 'Агент сложных задач',
  asstSpeaking: 'говорит', asstHandoff: 'передаёт разговор', asstReturn: 'возвращает управление', asstDelegate: 'поручает',
  asstConfirmTitle: 'Подтвердите действие', asstYes: 'Да, выполнить', asstNo: 'Нет',
  asstConfirmed: 'Подтверждено', asstDeclined: 'Отклонено', asstPartial: 'Подтверждено частично', asstPlan: 'План', asstTask: 'Сложная задача',
  asstTo: 'Кому', asstSubject: 'Тема', asstTime: 'Время', asstText: 'Текст', asstHeld: 'Ещё не выполнено: ждёт вашего решения',
  asstDecision_approve: 'выполнено', asstDecision_confirm: 'ждёт подтверждения', asstDecision_clarify: 'нужен ваш ответ', asstDecision_reject: 'невозможно',
});

const AGENTS = ['router', 'knowledge', 'interview', 'planner', 'task'];

function agentBadge(name) {
  const known = AGENTS.includes(name);
  return h('span', { class: ['asst-badge', known ? `asst-${name}` : ''] }, known ? t(`agent_${name}`) : String(name));
}

registerPartView('assistant_agent', (d) => {
  if (!d || typeof d.agent !== 'string') return null;
  return h('div', { class: 'step asst-speaker' }, agentBadge(d.agent), h('span', { class: 'muted' }, t('asstSpeaking')));
});

registerPartView('assistant_handoff', (d) => {
  if (!d || typeof d.from !== 'string' || typeof d.to !== 'string') return null;
  const verb = d.kind === 'return' ? 'asstReturn' : d.kind === 'delegate' ? 'asstDelegate' : 'asstHandoff';
  return h('div', { class: ['step', 'asst-handoff', `asst-${d.kind === 'return' ? 'return' : 'out'}`] },
    agentBadge(d.from), h('span', { class: 'asst-arrow' }, d.kind === 'return' ? '↩' : '→'), h('span', { class: 'muted' }, t(verb)),
    agentBadge(d.to), typeof d.reason === 'string' && d.reason ? h('span', { class: 'asst-reason' }, d.reason) : null);
});

// actionItem shows a held action as a person reads it: what it is, whom it
// reaches, its subject, time and text (Sova read them from its arguments).
function actionItem(a) {
  const v = a.view && typeof a.view === 'object' ? a.view : {};
  const row = (label, value) => (value ? h('div', { class: 'asst-field' }, h('span', { class: 'muted' }, t(label) + ': '), h('span', null, value)) : null);
  const to = Array.isArray(v.recipients) ? v.recipients.filter((x) => typeof x === 'string').join(', ') : '';
  return h('li', { class: 'asst-action', dataset: { id: typeof a.id === 'string' ? a.id : '' } },
    h('strong', null, typeof a.title === 'string' ? a.title : a.tool),
    row('asstTo', to), row('asstSubject', typeof v.subject === 'string' ? v.subject : ''),
    row('asstTime', typeof v.time === 'string' ? v.time : ''), row('asstText', typeof v.excerpt === 'string' ? v.excerpt : ''));
}

// The card is placed by the turn outside the Steps panel; ctx.decide sends
// the decision (a label for the chat, and the action ids).
registerPartView('assistant_confirmation', (d, _key, ctx) => {
  if (!d || !Array.isArray(d.actions)) return null;
  const list = d.actions.filter((a) => a && typeof a.tool === 'string');
  const card = h('div', { class: 'card asst-confirm', dataset: { status: String(d.status || '') } },
    h('div', { class: 'card-head' }, icon('question'), h('span', null, t('asstConfirmTitle'))),
    d.status === 'waiting' ? h('p', { class: 'muted' }, t('asstHeld')) : null,
    h('ul', { class: 'asst-actions' }, list.map(actionItem)));
  const ids = list.map((a) => a.id).filter((id) => typeof id === 'string');
  if (d.status === 'waiting' && ctx && typeof ctx.decide === 'function' && !ctx.frozen && ids.length) {
    const yes = h('button', { class: 'btn primary asst-yes', type: 'button' }, t('asstYes'));
    const no = h('button', { class: 'btn asst-no', type: 'button' }, t('asstNo'));
    const done = (label, decision) => { yes.disabled = no.disabled = true; ctx.decide(label, decision); };
    yes.addEventListener('click', () => done(t('asstYes'), { approve: ids }));
    no.addEventListener('click', () => done(t('asstNo'), { decline: ids }));
    card.append(h('div', { class: 'clarify-actions' }, no, yes));
  } else if (d.status === 'confirmed' || d.status === 'declined' || d.status === 'partial') {
    const label = { confirmed: 'asstConfirmed', declined: 'asstDeclined', partial: 'asstPartial' }[d.status];
    card.querySelector('.card-head').append(h('span', { class: 'badge' }, t(label)));
  }
  return card;
});

registerPartView('assistant_plan', (d) => {
  if (!d || typeof d.decision !== 'string') return null;
  const steps = Array.isArray(d.workflowSteps) ? d.workflowSteps.filter((s) => typeof s === 'string') : [];
  return h('div', { class: 'step asst-plan' },
    h('div', { class: 'asst-plan-head' }, agentBadge('planner'), h('span', null, t('asstPlan')),
      h('span', { class: 'badge' }, t(`asstDecision_${d.decision}`))),
    h('ol', { class: 'asst-steps' }, steps.map((s) => h('li', null, s))),
    typeof d.nextResponse === 'string' ? h('p', { class: 'asst-next' }, d.nextResponse) : null);
});

registerPartView('assistant_task', (d) => {
  if (!d || !Array.isArray(d.subtasks)) return null;
  return h('div', { class: 'step asst-task' },
    h('div', { class: 'asst-plan-head' }, agentBadge('task'), h('span', null, t('asstTask')),
      typeof d.state === 'string' ? h('span', { class: 'badge' }, d.state) : null),
    h('ol', { class: 'asst-steps' }, d.subtasks.filter((s) => s && typeof s.title === 'string').map((s) =>
      h('li', { class: `asst-sub-${String(s.status || 'pending')}` }, s.title))));
});
