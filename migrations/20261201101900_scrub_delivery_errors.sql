-- A failed delivery's error used to carry the target's full URL ("unreachable: error sending
-- request for url (https://hooks.slack.com/services/…)"), and every viewer of the incident read
-- it. Say only what kind of failure it was, as the sender now does.
update notifications
set last_error = 'could not connect (no such host, or the connection was refused)'
where last_error like 'unreachable:%';

update contact_methods
set last_error = 'could not connect (no such host, or the connection was refused)'
where last_error like 'unreachable:%';
