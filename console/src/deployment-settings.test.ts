import { describe, expect, it } from 'vitest';
import { settingsFieldsOf, settingsUpdate, versionSharesOf } from './deployment-settings';
import type { Deployment } from './types';

const deployment = (over: Partial<Deployment> = {}): Deployment =>
  ({
    id: 'dep',
    agent_id: 'agent',
    environment: 'production',
    status: 'active',
    agent_name: 'Front desk',
    call_direction: 'inbound',
    agent_version: null,
    versions: null,
    engagement_rules: { max_turns_per_conversation: 50, proactive: [{ id: 'rooms', when: { path: '/rooms' } }] },
    channel_config: {
      hook_url: 'https://hotel.example/hook',
      allowed_origins: ['https://hotel.example', 'https://www.hotel.example'],
      widget: { title: 'Reception', feedback: false },
      custom_key: 'kept',
    },
    runtime_config: { reply_timeout_s: 60, speech_recognition: 'service', person_wait_notice: 'Soon' },
    deployed_at: null,
    transcript_hook_status: 'enabled',
    transcript_hook_disabled_at: null,
    transcript_hook_disabled_reason: null,
    created_at: '2026-11-29T00:00:00.000Z',
    updated_at: '2026-11-29T00:00:00.000Z',
    ...over,
  }) as Deployment;

describe("the deployment settings form's fields", () => {
  it('are filled from the deployment, a list a line each, defaults where it sets none', () => {
    expect(settingsFieldsOf(deployment())).toEqual({
      connection: {
        hookUrl: 'https://hotel.example/hook',
        transcriptUrl: '',
        origins: 'https://hotel.example\nhttps://www.hotel.example',
        environment: 'production',
        direction: 'inbound',
        version: '',
        split: '',
      },
      theme: { title: 'Reception', accent: '#1d4ed8', position: 'bottom-right', languages: '' },
      limits: { maxTurns: '50', perMinute: '', hookTimeout: '', replyTimeout: '60' },
      voice: { recognition: 'service', synthesis: 'auto', mode: 'auto' },
      personWait: { noticeS: '', notice: 'Soon' },
      privacy: { keep: 'everything', redact: ['email', 'phone', 'card', 'iban'], retentionDays: '' },
    });
    expect(settingsFieldsOf(deployment({ agent_version: 3 })).connection.version).toBe('3');
  });

  it('send back what they hold, keep what the form does not show, and leave an emptied field to its default', () => {
    const dep = deployment();
    const fields = settingsFieldsOf(dep);
    fields.connection = { ...fields.connection, hookUrl: '', version: '2', origins: ' https://a.example \n\n' };
    fields.theme = { ...fields.theme, title: '', languages: 'de-DE, fr-FR\nen-GB' };
    fields.limits = { ...fields.limits, maxTurns: '', perMinute: '12' };
    fields.voice = { recognition: 'off', synthesis: 'browser', mode: 'push_to_talk' };
    fields.personWait = { noticeS: '0', notice: '   ' };
    expect(settingsUpdate(dep, fields)).toEqual({
      agent_version: 2,
      versions: null,
      environment: 'production',
      call_direction: 'inbound',
      channel_config: {
        hook_url: undefined,
        transcript_hook_url: undefined,
        allowed_origins: ['https://a.example'],
        widget: {
          title: undefined,
          feedback: false,
          accent_color: '#1d4ed8',
          position: 'bottom-right',
          languages: ['de-DE', 'fr-FR', 'en-GB'],
        },
        custom_key: 'kept',
      },
      engagement_rules: {
        max_turns_per_conversation: undefined,
        turns_per_minute: 12,
        proactive: [{ id: 'rooms', when: { path: '/rooms' } }],
      },
      runtime_config: {
        hook_timeout_ms: undefined,
        reply_timeout_s: 60,
        speech_recognition: 'off',
        speech_synthesis: 'browser',
        voice_mode: 'push_to_talk',
        person_wait_notice_s: 0,
        person_wait_notice: undefined,
      },
    });
  });

  it('send the deployment unchanged when nothing was edited', () => {
    const dep = deployment({ agent_version: 4 });
    const body = settingsUpdate(dep, settingsFieldsOf(dep));
    expect(body.agent_version).toBe(4);
    expect(JSON.parse(JSON.stringify(body.channel_config))).toEqual({
      ...dep.channel_config,
      widget: { title: 'Reception', feedback: false, accent_color: '#1d4ed8', position: 'bottom-right' },
    });
    expect(JSON.parse(JSON.stringify(body.runtime_config))).toEqual({
      ...dep.runtime_config,
      speech_synthesis: 'auto',
    });
  });

  it('splits new conversations between versions as written, and says how to write it otherwise', () => {
    const fields = settingsFieldsOf(
      deployment({
        versions: [
          { version: 1, weight: 80 },
          { version: 2, weight: 20 },
        ],
      }),
    );
    expect(fields.connection.split).toBe('1:80, 2:20');
    expect(settingsUpdate(deployment(), fields).versions).toEqual([
      { version: 1, weight: 80 },
      { version: 2, weight: 20 },
    ]);
    expect(versionSharesOf(' ')).toBeNull();
    expect(() => versionSharesOf('1:50, two:50')).toThrow(
      'Split between versions: “two:50” is not version:weight; write them comma-separated, such as 1:50, 2:50',
    );
  });

  it('keep what is said as chosen: absent for every word, the kinds only when fewer than all', () => {
    const kept = (privacy: Deployment['runtime_config']['privacy']) =>
      settingsUpdate(deployment(), {
        ...settingsFieldsOf(deployment()),
        privacy: settingsFieldsOf(deployment({ runtime_config: { privacy } })).privacy,
      }).runtime_config.privacy;
    expect(kept(undefined)).toBeUndefined();
    expect(kept({ keep: 'redacted' })).toEqual({ keep: 'redacted', retention_days: undefined });
    expect(kept({ keep: 'redacted', redact: ['email', 'card'] })).toEqual({
      keep: 'redacted',
      redact: ['email', 'card'],
      retention_days: undefined,
    });
    expect(kept({ keep: 'metadata', redact: ['email'], retention_days: 30 })).toEqual({
      keep: 'metadata',
      retention_days: 30,
    });
    expect(kept({ retention_days: 7 })).toEqual({ keep: 'everything', retention_days: 7 });
  });
});
