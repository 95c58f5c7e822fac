import { render } from 'preact';
import { Api } from './api.js';
import { App } from './app.js';
import { Session } from './session.js';
import './style.css';

const session = new Session({ storage: sessionStorage });
const api = new Api(session);
render(<App services={{ api, session }} />, document.getElementById('app')!);
