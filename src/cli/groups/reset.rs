//! `--reset-offsets`: the partitions a reset names, the new offsets by scenario (Kafka's
//! `GroupOffsetsResetter`), committed with `--execute`, printed or exported as CSV.

use super::{Failure, GroupsArgs, Outcome, failed, print_error, scenarios, selected_groups};
use crate::cli::client::{AdminClient, CommittedOffset, OffsetSpec};
use std::collections::BTreeMap;

/// A group's new offsets, by topic and partition.
type ResetPlan = BTreeMap<(String, i32), i64>;

pub(super) async fn reset(client: &mut AdminClient, args: &GroupsArgs) -> Outcome {
    if scenarios(args) == 0 {
        return Err(Failure::Usage(
            "Option '[reset-offsets]' requires one of the following scenarios: [to-offset], [shift-by], [to-datetime], [by-duration], [to-earliest], [to-latest], [to-current], [from-file]"
                .into(),
        ));
    }
    let groups = selected_groups(client, args).await?;
    let mut plans: Vec<(String, ResetPlan)> = Vec::new();
    for group in groups {
        let state = match client.describe_group(&group).await {
            Ok(description) => description.state,
            // A group that does not exist is reset (and, with --execute, made) as an empty one.
            Err(e) if e.code() == Some(69) => "Dead".to_string(),
            Err(e) => return Err(failed(e)),
        };
        if state != "Empty" && state != "Dead" {
            print_error(&format!(
                "Assignments can only be reset if the group '{group}' is inactive, but the current state is {state}."
            ));
            plans.push((group, BTreeMap::new()));
            continue;
        }
        let plan = reset_plan(client, args, &group).await?;
        if args.execute {
            let offsets: Vec<(String, i32, i64)> =
                plan.iter().map(|((t, p), o)| (t.clone(), *p, *o)).collect();
            client.commit_offsets(&group, &offsets).await.map_err(|e| {
                Failure::Command(format!(
                    "Executing consumer group command failed due to {e}"
                ))
            })?;
        }
        plans.push((group, plan));
    }
    if args.export {
        let single = args.group.len() == 1;
        let mut out = String::new();
        for (group, plan) in &plans {
            for ((topic, partition), offset) in plan {
                if single {
                    out.push_str(&format!("{topic},{partition},{offset}\n"));
                } else {
                    out.push_str(&format!("{group},{topic},{partition},{offset}\n"));
                }
            }
        }
        println!("{out}");
        return Ok(());
    }
    let group_width = plans
        .iter()
        .map(|(g, _)| g.len())
        .chain([15])
        .max()
        .unwrap_or(15);
    let topic_width = plans
        .iter()
        .flat_map(|(_, p)| p.keys().map(|(t, _)| t.len()))
        .chain([15])
        .max()
        .unwrap_or(15);
    let mut out = String::new();
    if !plans.is_empty() {
        out.push_str(&format!(
            "\n{:<group_width$} {:<topic_width$} {:<10} NEW-OFFSET",
            "GROUP", "TOPIC", "PARTITION"
        ));
    }
    for (group, plan) in &plans {
        for ((topic, partition), offset) in plan {
            out.push_str(&format!(
                "\n{group:<group_width$} {topic:<topic_width$} {partition:<10} {offset}"
            ));
        }
    }
    println!("{out}");
    Ok(())
}

/// The partitions --all-topics or --topic name, checked to exist and have a leader.
async fn partitions_to_reset(
    client: &mut AdminClient,
    args: &GroupsArgs,
    committed: &[CommittedOffset],
) -> Result<Vec<(String, i32)>, Failure> {
    let plain = |message: String| {
        Failure::Command(format!(
            "Executing consumer group command failed due to {message}"
        ))
    };
    let mut partitions = Vec::new();
    if args.all_topics {
        partitions.extend(committed.iter().map(|c| (c.topic.clone(), c.partition)));
    } else if !args.topic.is_empty() {
        let mut whole_topics = Vec::new();
        for arg in &args.topic {
            match super::topic_partitions(arg)? {
                (topic, Some(listed)) => {
                    partitions.extend(listed.into_iter().map(|p| (topic.clone(), p)));
                }
                (topic, None) => whole_topics.push(topic),
            }
        }
        if !whole_topics.is_empty() {
            let described = client
                .describe_topics(&whole_topics)
                .await
                .map_err(|e| plain(e.to_string()))?;
            for topic in described {
                partitions.extend(
                    topic
                        .partitions
                        .iter()
                        .map(|p| (topic.name.clone(), p.partition)),
                );
            }
        }
    } else {
        return Err(Failure::Usage(
            "One of the reset scopes should be defined: --all-topics, --topic.".into(),
        ));
    }
    let mut topics: Vec<String> = partitions.iter().map(|(t, _)| t.clone()).collect();
    topics.sort();
    topics.dedup();
    if topics.is_empty() {
        return Ok(partitions);
    }
    let described = client
        .describe_topics(&topics)
        .await
        .map_err(|e| plain(e.to_string()))?;
    let mut existing = BTreeMap::new();
    for topic in &described {
        for p in &topic.partitions {
            existing.insert((topic.name.clone(), p.partition), p.leader.is_some());
        }
    }
    let name = |(t, p): &(String, i32)| format!("{t}-{p}");
    let missing: Vec<String> = partitions
        .iter()
        .filter(|tp| !existing.contains_key(*tp))
        .map(name)
        .collect();
    if !missing.is_empty() {
        return Err(plain(format!(
            "The partitions \"{}\" do not exist",
            missing.join(",")
        )));
    }
    let leaderless: Vec<String> = partitions
        .iter()
        .filter(|tp| existing.get(*tp) == Some(&false))
        .map(name)
        .collect();
    if !leaderless.is_empty() {
        return Err(plain(format!(
            "The partitions \"{}\" have no leader",
            leaderless.join(",")
        )));
    }
    Ok(partitions)
}

/// The new offset of each partition, by the scenario asked for.
async fn reset_plan(
    client: &mut AdminClient,
    args: &GroupsArgs,
    group: &str,
) -> Result<BTreeMap<(String, i32), i64>, Failure> {
    let committed = client.committed_offsets(group).await.map_err(failed)?;
    let partitions = partitions_to_reset(client, args, &committed).await?;
    let current: BTreeMap<(String, i32), i64> = committed
        .iter()
        .map(|c| ((c.topic.clone(), c.partition), c.offset))
        .collect();
    let mut plan = BTreeMap::new();
    if let Some(target) = args.to_offset {
        let requested = partitions.iter().map(|tp| (tp.clone(), target)).collect();
        return clamp(client, requested, &partitions).await;
    }
    if let Some(shift) = args.shift_by {
        let mut requested = BTreeMap::new();
        for tp in &partitions {
            let offset = current.get(tp).ok_or_else(|| {
                Failure::Usage(format!(
                    "Cannot shift offset for partition {}-{} since there is no current committed offset",
                    tp.0, tp.1
                ))
            })?;
            requested.insert(tp.clone(), offset + shift);
        }
        return clamp(client, requested, &partitions).await;
    }
    if args.to_earliest || args.to_latest {
        let spec = if args.to_earliest {
            OffsetSpec::Earliest
        } else {
            OffsetSpec::Latest
        };
        for (tp, offset) in offsets(client, &partitions, spec).await? {
            plan.insert(tp, offset.unwrap_or(0));
        }
        return Ok(plan);
    }
    if args.to_current {
        let ends = offsets(client, &partitions, OffsetSpec::Latest).await?;
        for tp in &partitions {
            let offset = match current.get(tp) {
                Some(offset) => *offset,
                None => ends.get(tp).copied().flatten().unwrap_or(0),
            };
            plan.insert(tp.clone(), offset);
        }
        return Ok(plan);
    }
    let timestamp = match (&args.to_datetime, &args.by_duration) {
        (Some(text), _) => parse_datetime(text).map_err(Failure::Usage)?,
        (_, Some(text)) => {
            let ago = parse_duration_ms(text).map_err(Failure::Usage)?;
            crate::types::now_ms() - ago
        }
        _ => return Ok(plan),
    };
    let found = offsets(client, &partitions, OffsetSpec::Timestamp(timestamp)).await?;
    let ends = offsets(client, &partitions, OffsetSpec::Latest).await?;
    for tp in &partitions {
        match found.get(tp).copied().flatten() {
            Some(offset) => {
                plan.insert(tp.clone(), offset);
            }
            None => {
                println!(
                    "\nWarn: Partition {} from topic {} is empty. Falling back to latest known offset.",
                    tp.1, tp.0
                );
                plan.insert(tp.clone(), ends.get(tp).copied().flatten().unwrap_or(0));
            }
        }
    }
    Ok(plan)
}

async fn offsets(
    client: &mut AdminClient,
    partitions: &[(String, i32)],
    spec: OffsetSpec,
) -> Result<BTreeMap<(String, i32), Option<i64>>, Failure> {
    client.list_offsets(partitions, spec).await.map_err(failed)
}

/// Kafka's `checkOffsetsRange`: requested offsets moved into [log start, log end].
async fn clamp(
    client: &mut AdminClient,
    requested: BTreeMap<(String, i32), i64>,
    partitions: &[(String, i32)],
) -> Result<BTreeMap<(String, i32), i64>, Failure> {
    let starts = client
        .list_offsets(partitions, OffsetSpec::Earliest)
        .await
        .map_err(failed)?;
    let ends = client
        .list_offsets(partitions, OffsetSpec::Latest)
        .await
        .map_err(failed)?;
    Ok(requested
        .into_iter()
        .map(|(tp, offset)| {
            let end = ends.get(&tp).copied().flatten();
            let start = starts.get(&tp).copied().flatten();
            let offset = match (start, end) {
                (_, Some(end)) if offset > end => end,
                (Some(start), _) if offset < start => start,
                _ => offset,
            };
            (tp, offset)
        })
        .collect())
}

/// Kafka's `Utils.getDateTime`: `yyyy-MM-ddTHH:mm:ss[.SSS]` with an optional zone (`Z`,
/// `+hh:mm`, `+hhmm`); without one, UTC here (Kafka's tool takes the JVM's zone).
fn parse_datetime(text: &str) -> Result<i64, String> {
    let invalid =
        || format!("Error parsing date: {text}. Expected format: yyyy-MM-dd'T'HH:mm:ss.SSS");
    let (date, time) = text.split_once('T').ok_or_else(invalid)?;
    let mut date_parts = date.split('-').map(str::parse::<i64>);
    let (Some(Ok(year)), Some(Ok(month)), Some(Ok(day)), None) = (
        date_parts.next(),
        date_parts.next(),
        date_parts.next(),
        date_parts.next(),
    ) else {
        return Err(invalid());
    };
    let (clock, offset_minutes) = match time.find(['Z', '+', '-']) {
        Some(at) => {
            let zone = &time[at..];
            let minutes = if zone == "Z" {
                0
            } else {
                let sign = if zone.starts_with('-') { -1 } else { 1 };
                let digits: String = zone[1..].chars().filter(char::is_ascii_digit).collect();
                if digits.len() != 4 {
                    return Err(invalid());
                }
                let hours: i64 = digits[..2].parse().map_err(|_| invalid())?;
                let minutes: i64 = digits[2..].parse().map_err(|_| invalid())?;
                sign * (hours * 60 + minutes)
            };
            (&time[..at], minutes)
        }
        None => (time, 0),
    };
    let (hms, millis) = match clock.split_once('.') {
        Some((hms, fraction)) => (
            hms,
            format!("{fraction:0<3}")[..3]
                .parse::<i64>()
                .map_err(|_| invalid())?,
        ),
        None => (clock, 0),
    };
    let mut parts = hms.split(':').map(str::parse::<i64>);
    let (Some(Ok(hour)), Some(Ok(minute)), Some(Ok(second)), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid());
    };
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return Err(invalid());
    }
    let days = days_from_civil(year, month, day);
    Ok(
        ((days * 86_400 + hour * 3_600 + minute * 60 + second) - offset_minutes * 60) * 1_000
            + millis,
    )
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An ISO-8601 duration as Java's `Duration.parse` reads it (`PnDTnHnMn.nS`), in ms.
fn parse_duration_ms(text: &str) -> Result<i64, String> {
    let invalid = || format!("Text cannot be parsed to a Duration: {text}");
    let upper = text.to_ascii_uppercase();
    let (negative, rest) = match upper.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, upper.trim_start_matches('+')),
    };
    let rest = rest.strip_prefix('P').ok_or_else(invalid)?;
    let (days_part, time_part) = match rest.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    let mut ms: f64 = 0.0;
    let mut any = false;
    let mut take = |part: &str, units: &[(char, f64)]| -> Result<(), String> {
        let mut number = String::new();
        for c in part.chars() {
            if c.is_ascii_digit() || c == '.' || c == '-' {
                number.push(c);
                continue;
            }
            let unit = units.iter().find(|(u, _)| *u == c).ok_or_else(invalid)?;
            let value: f64 = number.parse().map_err(|_| invalid())?;
            ms += value * unit.1;
            any = true;
            number.clear();
        }
        if number.is_empty() {
            Ok(())
        } else {
            Err(invalid())
        }
    };
    take(days_part, &[('D', 86_400_000.0)])?;
    if let Some(time) = time_part {
        if time.is_empty() {
            return Err(invalid());
        }
        take(time, &[('H', 3_600_000.0), ('M', 60_000.0), ('S', 1_000.0)])?;
    }
    if !any {
        return Err(invalid());
    }
    let ms = ms.round() as i64;
    Ok(if negative { -ms } else { ms })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetimes_parse_as_kafkas() {
        assert_eq!(parse_datetime("1970-01-01T00:00:00").unwrap(), 0);
        assert_eq!(parse_datetime("1970-01-01T00:00:01.5").unwrap(), 1_500);
        assert_eq!(
            parse_datetime("2024-03-01T10:00:00.000Z").unwrap(),
            1_709_287_200_000
        );
        assert_eq!(
            parse_datetime("2024-03-01T12:00:00.000+02:00").unwrap(),
            1_709_287_200_000
        );
        assert!(parse_datetime("yesterday").is_err());
        assert!(parse_datetime("2024-13-01T00:00:00").is_err());
    }

    #[test]
    fn durations_parse_as_javas() {
        assert_eq!(parse_duration_ms("PT1H").unwrap(), 3_600_000);
        assert_eq!(
            parse_duration_ms("P1DT2M3.5S").unwrap(),
            86_400_000 + 120_000 + 3_500
        );
        assert_eq!(parse_duration_ms("pt10m").unwrap(), 600_000);
        assert!(parse_duration_ms("P").is_err());
        assert!(parse_duration_ms("1H").is_err());
    }
}
