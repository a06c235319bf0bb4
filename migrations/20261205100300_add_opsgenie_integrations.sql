-- Opsgenie's Alert API: an integration whose key Opsgenie clients send as `GenieKey`.
alter table integrations drop constraint integrations_format_check;
alter table integrations add constraint integrations_format_check
    check (format in ('alertmanager', 'grafana', 'pagerduty-events-v2', 'generic', 'opsgenie'));
