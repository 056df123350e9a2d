// The console's login: when the node's WebSocket listener takes SASL logins
// a person can type (SCRAM-SHA-256/512, PLAIN: config.json's `sasl`), the
// header offers "Log in"; with ws.sasl.required the form opens at once and
// nothing else is shown until a login works. The credentials go into the
// browser client's `sasl` option and stay in this page's memory only (a
// reload forgets them); every connection the client opens authenticates
// with them, and what the principal may do is the cluster's ACLs' business.

import { fill, h } from './dom.js';
import { errorText, type ConsoleConfig } from './context.js';

export interface Login {
  readonly mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512' | 'PLAIN';
  readonly username: string;
  readonly password: string;
}

export interface LoginActions {
  /** Resolves once a client logged in with `login` answered; rejects with why not. */
  tryLogin(login: Login): Promise<void>;
  logout(): void;
}

export function loginControls(config: ConsoleConfig, actions: LoginActions): { open(reason?: string): void } {
  const box = document.getElementById('login')!;
  const who = document.getElementById('whoami')!;
  const mechanisms = config.sasl?.mechanisms ?? [];
  const showButton = () => fill(who, mechanisms.length === 0 ? null : h('button', { id: 'login-button', type: 'button', onclick: () => open() }, 'Log in'));
  const open = (reason?: string) => {
    const mechanism = h('select', { id: 'login-mechanism' }, ...mechanisms.map((m) => h('option', { value: m }, m)));
    const username = h('input', { id: 'login-user', autocomplete: 'username', required: true });
    const password = h('input', { id: 'login-password', type: 'password', autocomplete: 'current-password', required: true });
    const error = h('p', { id: 'login-error', class: 'error' });
    const form = h('form', { id: 'login-form' },
      reason ? h('p', { class: 'muted' }, reason) : null,
      h('label', {}, 'Mechanism ', mechanism), h('label', {}, 'User ', username), h('label', {}, 'Password ', password),
      h('button', { type: 'submit' }, 'Log in'), error);
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const login: Login = { mechanism: mechanism.value as Login['mechanism'], username: username.value, password: password.value };
      error.textContent = 'logging in…';
      actions.tryLogin(login).then(() => {
        fill(box);
        fill(who, h('span', { id: 'principal' }, `${login.username} (${login.mechanism})`), ' ',
          h('button', { id: 'logout-button', type: 'button', onclick: () => { actions.logout(); showButton(); if (config.sasl?.required) open(); } }, 'Log out'));
      }, (err: unknown) => { error.textContent = `not logged in: ${errorText(err)}`; });
    });
    fill(box, form);
  };
  showButton();
  return { open };
}
