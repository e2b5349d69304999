// Views of the assistant mode (seed 004): which agent speaks, hand-offs
// and returns, the person's confirmation of an action (buttons that send
// "yes" or "no" as the next message), the planning agent's plan and the
// complex task's progress.
import { h, icon } from '../dom.js';
import { addStrings, t } from '../i18n.js';
import { registerPartView } from '../views.js';

addStrings({
  agent_router: 'Assistant', agent_knowledge: 'Knowledge agent', agent_interview: 'Interview agent',
  agent_planner: 'Planning agent', agent_task: 'Complex-task agent',
  asstSpeaking: 'speaks', asstHandoff: 'hands off to', asstReturn: 'returns control to', asstDelegate: 'delegates to',
  asstConfirmTitle: 'Confirm the action', asstYes: 'Yes, do it', asstNo: 'No',
  asstConfirmed: 'Confirmed', asstDeclined: 'Declined', asstPlan: 'Plan', asstTask: 'Complex task',
  asstDecision_approve: 'done', asstDecision_confirm: 'waits for your confirmation', asstDecision_clarify: 'needs your answer', asstDecision_reject: 'cannot be done',
}, {
  agent_router: 'Ассистент', agent_knowledge: 'Агент знаний', agent_interview: 'Агент-интервьюер',
  agent_planner: 'Агент планирования', agent_task: 'Агент сложных задач',
  asstSpeaking: 'говорит', asstHandoff: 'передаёт разговор', asstReturn: 'возвращает управление', asstDelegate: 'поручает',
  asstConfirmTitle: 'Подтвердите действие', asstYes: 'Да, выполнить', asstNo: 'Нет',
  asstConfirmed: 'Подтверждено', asstDeclined: 'Отклонено', asstPlan: 'План', asstTask: 'Сложная задача',
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

// answer sends text as the next message of the chat, through the composer.
function answer(text) {
  const input = document.getElementById('input');
  const form = document.getElementById('composer');
  if (!input || !form) return;
  input.value = text;
  form.requestSubmit();
}

registerPartView('assistant_confirmation', (d) => {
  if (!d || !Array.isArray(d.actions)) return null;
  const actions = h('ul', { class: 'asst-actions' }, d.actions.filter((a) => a && typeof a.tool === 'string').map((a) =>
    h('li', null, h('strong', null, typeof a.title === 'string' ? a.title : a.tool),
      a.args && typeof a.args === 'object' ? h('code', { class: 'asst-args' }, JSON.stringify(a.args)) : null)));
  const card = h('div', { class: 'card asst-confirm', dataset: { status: String(d.status || '') } },
    h('div', { class: 'card-head' }, icon('question'), h('span', null, t('asstConfirmTitle'))),
    typeof d.question === 'string' ? h('p', null, d.question) : null, actions);
  if (d.status === 'waiting') {
    const yes = h('button', { class: 'btn primary asst-yes', type: 'button' }, t('asstYes'));
    const no = h('button', { class: 'btn asst-no', type: 'button' }, t('asstNo'));
    const done = (text) => { yes.disabled = no.disabled = true; answer(text); };
    yes.addEventListener('click', () => done(t('asstYes').startsWith('Да') ? 'да' : 'yes'));
    no.addEventListener('click', () => done(t('asstNo') === 'Нет' ? 'нет' : 'no'));
    card.append(h('div', { class: 'clarify-actions' }, no, yes));
  } else if (d.status === 'confirmed' || d.status === 'declined') {
    card.querySelector('.card-head').append(h('span', { class: 'badge' }, t(d.status === 'confirmed' ? 'asstConfirmed' : 'asstDeclined')));
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
