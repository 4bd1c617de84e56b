"""Meaning guards: each fires on a changed or missing value and stays quiet on a restatement (issue 21)."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from langchain_refs import (
    AnswerReferences,
    Citation,
    LexicalScorer,
    Reference,
    ReferencePredictor,
    ReferencesCollector,
    TextReferenceStyle,
    manage_references,
    verify_citations,
)
from langchain_refs.grounding import (
    Claim,
    MeaningGuards,
    ScorerClaimChecker,
    antonym_guard,
    citation_findings,
    hedge_guard,
    name_guard,
    number_guard,
    polarity_guard,
    role_guard,
)
from tests.unit_tests.fakes import str_chunks

TOWER = "The Eiffel Tower, completed in 1889, is 330 metres tall. It has 3 levels open to visitors."
LOUVRE = "The Louvre museum is in Paris. Neil Alden Armstrong's visit to the United States was in 1969."

# (claim, evidence, label, the source's value) for claims each guard must stop.
NUMBER_FIRES = [
    ("The Eiffel Tower is 450 metres tall.", TOWER, "Contradiction", "330 metres"),
    ("The Eiffel Tower was completed in 1902.", TOWER, "Contradiction", "1889"),
    ("The Eiffel Tower has 5 levels open to visitors.", TOWER, "Contradiction", "3 levels"),
    ("The city has 12 bridges.", "The city has many bridges over the river.", "Neutral", None),
    ("It cost twenty million euros.", "It cost five million euros.", "Contradiction", "five million euros"),
    ("The tower is about 500 metres tall.", TOWER, "Contradiction", "330 metres"),
    # A claim's decimals are no rounding when they keep one significant digit, or move the value by over 5%.
    ("Rates were cut to 0.3 percent.", "Rates were cut to 0.25 percent.", "Contradiction", "0.25 percent"),
    ("The dose is 0.1 mg per day.", "The dose is 0.05 mg per day.", "Contradiction", "0.05 mg"),
    ("Python 3.1 added a parser.", "Python 3.12 added a parser.", "Contradiction", "3.12 added"),
    # A scale glued to the number is part of it: the same digits with another scale are another number.
    ("The fund holds $5M.", "The fund holds $5k.", "Contradiction", "5k"),
    ("The model has 7B parameters.", "The model has 7M parameters.", "Contradiction", "7M parameters"),
    ("It raised $1.5m.", "It raised $1.5bn.", "Contradiction", "1.5bn"),
    # The same value in another unit of measure or currency.
    ("The Eiffel Tower is 330 feet tall.", TOWER, "Contradiction", "330 metres"),
    ("The road is 410 km long.", "The road is 410 miles long.", "Contradiction", "410 miles"),
    # ... with a scale between the number and its unit, or the number in words.
    (
        "Voyager is 6.4 billion miles away.",
        "Voyager is 6.4 billion kilometres away.",
        "Contradiction",
        "6.4 billion kilometres",
    ),
    ("The trail is 5k miles long.", "The trail is 5k kilometres long.", "Contradiction", "5k kilometres"),
    (
        "The road is two hundred miles long.",
        "The road is two hundred kilometres long.",
        "Contradiction",
        "two hundred kilometres",
    ),
    ("The road is twenty-five miles long.", "The road is 25 kilometres long.", "Contradiction", "25 kilometres"),
    ("The ticket costs $30.", "The ticket costs \u20ac30.", "Contradiction", "\u20ac30"),
    ("The ticket costs 30 euros.", "The ticket costs $30.", "Contradiction", "$30"),
    ("The usual dose is 5 mg a day.", "The usual dose is 5 g a day.", "Contradiction", "5 g"),
    ("The repair takes 3 hours.", "The repair takes 3 days.", "Contradiction", "3 days"),
    ("It is given at 200,000 subscribers.", "It is given at 100k subscribers.", "Contradiction", "100k subscribers"),
    ("The wall is 5,000 m long.", "The wall is 5m long.", "Contradiction", "5m"),
    ("The race is 10km long.", "The race is 5km long.", "Contradiction", "5km"),  # units written onto numbers
    ("Take 200mg twice a day.", "Take 400mg twice a day.", "Contradiction", "400mg"),
    ("The pole is 1.2m long.", "The pole is 1.5 m long.", "Contradiction", "1.5 m"),
    ("The dose is 5 mg.", "The dose is 5.4 mg.", "Contradiction", "5.4 mg"),  # a whole number drops no decimals
    ("The dose is 5.4 mg.", "The dose is 5.46 mg.", "Contradiction", "5.46 mg"),  # 5.46 rounds to 5.5
    # Only a measure may be rounded: a name's number is as written.
    ("It runs Python 3.1.", "It runs Python 3.12.", "Contradiction", "3.12"),
    ("See Section 2.1 of the act.", "See Section 2.14 of the act.", "Contradiction", "2.14"),
    (
        "The city has 3.5 million residents.",
        "The city has 3,400,000 residents.",
        "Contradiction",
        "3,400,000 residents",
    ),  # "5m" is five metres (or millions), never 5,000
    # A bound is read from its own word: "less than", "fewer than" are under the value ("than" is none).
    ("The village has fewer than 100 residents.", "The village has 140 residents.", "Contradiction", "140 residents"),
    ("Inflation rose to 5% in May.", "Inflation rose to 4.5% in May.", "Contradiction", "4.5%"),  # "to" is no "about"
    ("It was -12 degrees at night.", "It was 12 degrees at night.", "Contradiction", "12 degrees"),  # a minus sign
    ("It was 12 degrees at night.", "It was \u221212 degrees at night.", "Contradiction", "\u221212 degrees"),
    # A rank against another rank in its slot, in words or digits.
    ("She finished third in the race.", "She finished second in the race.", "Contradiction", "second"),
    ("It was their fifth studio album.", "It was their 4th studio album.", "Contradiction", "4th studio"),
    # Units of one kind: micrograms and milligrams, the temperature scales, speeds, the time of day.
    ("Each tablet holds 50 mcg.", "Each tablet holds 50 mg.", "Contradiction", "50 mg"),
    ("Each tablet holds 200 mg.", "Each tablet holds 200 \u00b5g.", "Contradiction", "200 \u00b5g"),
    ("Water boils at 100 \u00b0F here.", "Water boils at 100 \u00b0C here.", "Contradiction", "100 \u00b0C"),
    ("The car reaches 100 mph.", "The car reaches 100 km/h.", "Contradiction", "100 km/h"),
    ("The shop opens at 9 pm.", "The shop opens at 9 am.", "Contradiction", "9 am"),
    ("She finished first in the race.", "She finished second in the race.", "Contradiction", "second"),
    # "up 5%" is a rise, "Greater" a name, "higher" an adjective: no bound without "to" or "than" after them.
    ("Sales were up 5% this year.", "Sales were up 3% this year.", "Contradiction", "3%"),
    (
        "Greater London has 9 million people.",
        "Greater London has 12 million people.",
        "Contradiction",
        "12 million people",
    ),
    ("The higher 20% rate applies.", "The higher 25% rate applies.", "Contradiction", "25%"),
    ("One bridge is 5 km long.", "One bridge is 1 km long.", "Contradiction", "1 km"),  # "one" is no value of its own
    ("He asked him in 2046.", "He asked him about 2018.", "Contradiction", "2018"),  # "about" a year: no year near it
    ("The deal is worth $4 million.", "The deal is worth $3m.", "Contradiction", "3m"),  # "m" after a currency sign
    # The same value with the opposite bound, or as a rate of another time.
    ("The battery lasts more than 10 hours.", "The battery lasts up to 10 hours.", "Contradiction", "10 hours"),
    ("The drug costs up to $500 a month.", "The drug costs at least $500 a month.", "Contradiction", "$500"),
    ("The rate is 4.5% per month.", "The rate is 4.5% per year.", "Contradiction", "4.5%"),
    ("The dose is 500 mg per hour.", "The dose is 500 mg daily.", "Contradiction", "500 mg"),
    ("Prices rose 3 per cent a month.", "Prices rose 3 per cent a year.", "Contradiction", "3 per cent"),
    # A share, however written, is its percentage (about).
    ("About one in three adults has it.", "About one in four adults has it.", "Contradiction", "one in four"),
    (
        "A quarter of respondents would buy again.",
        "Three quarters of respondents would buy again.",
        "Contradiction",
        "Three quarters",
    ),
    ("One-third of voters supported it.", "Two-thirds of voters supported it.", "Contradiction", "Two-thirds"),
    ("30% of adults smoke.", "One in five adults smokes.", "Contradiction", "One in five"),
    ("Three quarters of voters backed it.", "Two-thirds of voters backed it.", "Contradiction", "Two-thirds"),
    ("57% of voters backed it.", "Half of voters backed it.", "Contradiction", "Half"),  # a share is held to points
    (
        "At least a third of the funds were spent.",
        "At most a third of the funds were spent.",
        "Contradiction",
        "a third",
    ),
    (
        "The subscription costs $10 a week.",
        "The subscription costs $10 a month or $100 a year.",
        "Contradiction",
        "$10",
    ),
    # "degrees Celsius" is the unit: the same value in the other scale is another temperature.
    (
        "Water boils at 212 degrees Celsius.",
        "Water boils at 100 \u00b0C (212 \u00b0F).",
        "Contradiction",
        "212 \u00b0F",
    ),
    (
        "Water boils at 100 degrees Fahrenheit.",
        "Water boils at 100 \u00b0C (212 \u00b0F).",
        "Contradiction",
        "100 \u00b0C",
    ),
    # A time of day is one number: found in use, "9:45" passed as supported by "9:15" (the colon ended a sentence,
    # and "45" after it was read as a list item's number).
    ("The train departs at 9:45.", "The train departs at 9:15.", "Contradiction", "9:15"),
    ("The train departs at 9:15 am.", "The train departs at 21:15 every evening.", "Contradiction", "21:15"),
    ("She ran the marathon in 2:01:39.", "She ran the marathon in 2:01:09, a record.", "Contradiction", "2:01:09"),
    ("The shop opens at 10 am.", "The shop opens at 9:00 am.", "Contradiction", "9:00 am"),
    ("The shop opens at 9:00 am.", "The shop opens at 9:00 pm.", "Contradiction", "9:00 pm"),
    ("The shop opens at 9 am.", "The shop opens at 9 pm.", "Contradiction", "9 pm"),
    # Another time in its slot (the word before it), whatever other numbers the sources write.
    ("The train departs at 9:45.", "The train departs at 9:15 and arrives 45 minutes later.", "Contradiction", "9:15"),
    # A second review's cases: a time is no plain number ("1:00" is no 60 minutes, "600" no 10:00), "09:15" says
    # its half of the day, and a running time is not a time of day twelve hours on.
    ("The meeting starts at 1:00.", "The meeting starts at 3:00 and lasts 60 minutes.", "Contradiction", "3:00"),
    (
        "The museum holds 600 paintings.",
        "The museum opens at 10:00 and holds 180 paintings.",
        "Contradiction",
        "180 paintings",
    ),
    ("The train departs at 09:15.", "The train departs at 21:15.", "Contradiction", "21:15"),
    ("The film runs 1:30.", "The film starts at 13:30 and runs 2:00.", "Contradiction", "2:00"),
    ("The shop opens at 9:30am.", "The shop opens at 9:30 pm.", "Contradiction", "9:30 pm"),
]
NUMBER_QUIET = [
    # A time of day agrees with itself written another way: with a dot, in 24 hours, or as the hour alone.
    ("The train departs at 9.15.", "The train departs at 9:15 every morning."),
    ("The train departs at 9:15.", "The train departs at 9.15 every morning."),
    ("The train departs at 9:15 pm.", "The train departs at 21:15 every evening."),
    ("The train departs at 12:30 a.m.", "The train departs at 0:30 every night."),
    ("The shop opens at 9 am.", "The shop opens at 9:00 am on weekdays."),
    ("The shop opens at 9:00 am.", "The shop opens at 9 am on weekdays."),
    ("It closes at 5 pm.", "It closes at 17:00."),
    # Where the sources give no time of day, its two numbers may be written otherwise: a score.
    ("The home side won 21:15.", "The home side won 21-15 on Sunday."),
    # A time of day in another slot says nothing of it (a review's cases: a verse, a score, a running time, a
    # race time, each beside a time of day in the sources).
    ("John 3:16 was read at the service.", "At 10:00 the pastor read John chapter 3, verse 16."),
    ("The home side won 21:15.", "Kick-off was at 19:30 and the home side won 21-15."),
    ("The film runs 1:30.", "The film, 1 hour 30 minutes long, starts at 20:00."),
    ("Smith won in 2:05:11.", "The race began at 9:00; Smith won in 2 hours 5 minutes 11 seconds."),
    ("The bus comes at 8:05.", "The bus comes at five past eight."),
    # A time that says no half of the day may be either half.
    ("Sunset was at 8:15.", "Sunset was at 8:15 pm."),
    ("Doors open at 7:30 and the show starts at 8 pm.", "Doors open at 7:30 pm; the show starts at 8 pm."),
    # A half of the day written onto the time ("9:30am"), and the hour alone in its slot.
    ("The shop opens at 9:30.", "The shop opens at 9:30am on weekdays; on Sundays the shop opens at 12:00."),
    ("The shop opens at 9:30pm.", "The shop opens at 21:30."),
    ("The shop opens at 9:00.", "On weekdays the shop opens at 9; on Sundays the shop opens at 11:00."),
    ("The shop is open 9:00 to 5:00.", "The shop is open from 9 am to 5 pm."),
    ("The meeting ran from 9:00 to 17:00.", "The meeting ran from 9:00-17:00."),
    ("John 3:16 is quoted often.", "John 3:16 is the most quoted verse."),
    # A unit written onto its number is read as written apart; a lower-case "m" with no currency is metres or millions.
    ("The population was 1.2 million in 2020.", "The population was 1.2m in 2020."),
    ("The population was 1.2m in 2020.", "The population was 1,200,000 in 2020."),
    ("Take 200 mg twice a day.", "Take 200mg twice a day."),
    # A claim may round the sources' value to its own last decimal place (never a whole number to drop decimals).
    ("The race is 42.2 kilometres long.", "The race is 42.195 km long."),
    ("Unemployment rose to 4.6%.", "Unemployment rose to 4.63%."),  # a percentage rounded, two digits kept
    ("Support rose to 52.4 per cent.", "Support rose to 52.38 per cent."),
    ("The city has 3.5 million residents.", "The city has 3,470,000 residents."),
    ("Revenue reached 1.1 billion dollars.", "Revenue reached $1,100,000,000."),
    ("The model has 7B parameters.", "The model has seven billion parameters."),
    ("The city has 1.2m residents.", "The city has 1,249,000 residents."),  # millions, rounded as written
    ("The deal is worth $3 million.", "The deal is worth $3m, the company said."),
    ("The club paid \u00a3250 million.", "The club paid \u00a3250m."),
    ("The tower is 5m tall.", "The tower is 5m tall."),  # no currency sign: metres
    ("The dose is 500 mg a day.", "The dose is 500 mg daily."),  # a rate said another way
    ("The loan costs 4.5% a year.", "The loan costs 4.5% per annum."),
    ("Prices rose 3% a month.", "Prices rose 3% in a month."),
    ("The firm had 500 staff a decade ago.", "The firm had 500 staff a year after its founding, a decade ago."),
    ("50% of the participants received a placebo.", "Half of the participants received a placebo."),
    ("25% of the budget goes to research.", "A quarter of the budget goes to research."),
    ("33% of voters backed it.", "About a third of voters backed it."),
    ("20% of adults smoke.", "One in five adults smokes."),
    ("30% of patients improved.", "Three out of ten patients improved."),
    ("Half of the class passed.", "Half the class passed."),
    # No share: a rank's "quarter" and "half", "two and a half", "3 in 2019".
    ("Sales rose in the second half of the year.", "Sales rose in the second half of the year."),
    ("In the second half of 2024, 30% came from China.", "In the last six months of 2024, 30% came from China."),
    ("It charges to 80% in half an hour.", "It charges to 80% in 30 minutes."),
    ("The economy shrank for two quarters in a row.", "The economy shrank for two consecutive quarters."),
    ("One in four adults has it.", "One in every four adults has it."),
    ("Sales rose in the third quarter.", "Sales rose in the third quarter."),
    ("It took two and a half years.", "It took two and a half years."),
    ("The team won 3 in 2019.", "The team won 3 in 2019."),
    ("The battery lasts not less than 10 hours.", "The battery lasts at least 10 hours."),  # a negated bound
    ("The battery lasts at least 10 hours.", "The battery lasts no less than 10 hours."),
    ("The battery lasts up to 10 hours.", "The battery lasts up to 10 hours, or 8 with the screen on."),
    ("It lasts more than 10 hours.", "It lasts more than 10 hours of music and up to 10 hours of video."),
    ("The Eiffel Tower is three hundred and thirty metres tall.", TOWER),  # the number in words
    ("The tower has three levels.", TOWER),
    ("It cost 5,000,000 euros.", "It cost five million euros."),
    ("It cost 2.5 million dollars.", "It cost 2,500,000 dollars."),
    ("The Eiffel Tower is 330 m tall.", TOWER),
    # The same unit written another way, or the value said without a unit.
    ("The road is 410 km long.", "The road is 410 kilometres long."),
    ("Prices rose 5% in 2020.", "Prices rose 5 percent in 2020."),
    ("The ticket costs $30.", "The ticket costs $30 in shops."),
    ("The ticket costs 30 dollars.", "The ticket costs 30, tax included."),
    ("The repair takes 3 weeks.", "The repair takes 3 months and 3 weeks."),
    # "per" is no unit; a sign says the currency; "\u00a5" is yen or yuan; 5 m (million) is not 5 days.
    ("The plan costs $30 per month.", "The plan costs $30 a month."),
    ("The dividend is $5 per share.", "The dividend is $5 a share."),
    ("Limit 2 per customer.", "Limit 2 kg per customer."),
    ("The ticket costs \u00a550.", "The ticket costs 50 yuan."),
    ("It cost $5 m.", "It cost 5 million dollars, paid in 5 days."),
    ("It weighs 5 tons.", "It weighs 5 tonnes."),
    ("The tower is about 320 metres tall.", TOWER),  # "about" allows a nearby value
    ("The tower is over 300 metres tall.", TOWER),
    ("The tower was finished in the 1880s.", TOWER),
    ("It is cited in the survey [3].", "It is cited in the survey."),  # a citation marker is no number
    ("1. Visit the tower first.", "Visit the tower first."),  # a list item's number
    ("It is awarded at 100,000 subscribers.", "It is awarded at 100k subscribers."),  # a scale written on the number
    ("It cost 5 million dollars.", "It cost $5M."),
    ("It cost 2,500,000,000 dollars.", "It cost $2.5bn."),
    ("The device weighs less than 50 grams.", "The device weighs 45 grams."),
    ("Up to 50 people attend.", "45 people attend."),
    ("The range is from -5 to 10 degrees.", "The range is from -5 to 10 degrees."),
    ("It ran from 1990-2000.", "It ran from 1990-2000."),  # a dash between years is no minus sign
    # Halves, thousands set apart by spaces, ranks in words and digits, a rank the sources do not give.
    ("The meeting lasted 2.5 hours.", "The meeting lasted two and a half hours."),
    ("The city had one and a half million inhabitants.", "The city had 1.5 million inhabitants."),
    ("The town has 1,000 residents.", "The town has 1 000 residents."),
    ("The lake lies at 1,200 metres.", "The lake lies at 1\u00a0200 metres."),
    ("He was the sixteenth president.", "He was the 16th president."),
    ("He won a second title.", "He won another title."),
    ("It has 2 towers.", "The second tower fell in 1990 and it has 2 towers."),
    # A sign in words, and a range's dash: no minus sign.
    ("It fell to -12 degrees.", "It fell to minus 12 degrees."),
    ("It fell to -12 degrees.", "It fell to 12 degrees below zero."),
    ("It fell to -12 at night.", "It fell to 12 below zero at night."),
    ("Temperatures of 5 -10 degrees.", "Temperatures of 5 to 10 degrees."),
    ("It grew to 500 members.", "It grew to about 520 members."),  # the sources' own "about"
    ("It was 12 degrees.", "It was 12 degrees in Grade 5 C."),  # a letter after a number is no temperature
    # Two values of the claim, each from another source: neither is the other's contradiction.
    (
        "The river is 300 km long and the canal is 120 km long.",
        "The river is 300 km long.\n\nThe canal is 120 km long.",
    ),
]
NAME_FIRES = [
    ("The Louvre museum is in London.", LOUVRE, "Contradiction", "Paris"),
    ("The Prado museum is in Paris.", LOUVRE, "Neutral", None),
    ("In 1969 Buzz Aldrin visited the United States.", LOUVRE, "Neutral", None),
    ("The museum is run by UNESCO.", LOUVRE, "Neutral", None),
    ("Paterson died on July 10, 2018.", "Paterson died on June 10, 2018.", "Contradiction", "June"),
    # A name after an abbreviation's period, or after a mark that is not a letter, is a name all the same.
    ("Museums, e.g. the Prado, are in Paris.", LOUVRE, "Neutral", None),
    ("Art, i.e. Prado art, is in Paris.", LOUVRE, "Neutral", None),
    ("The _Prado_ museum is in Paris.", LOUVRE, "Neutral", None),
    ("The grant was US$5 million.", "The grant was C$5 million.", "Neutral", None),  # other dollars
]
NAME_QUIET = [
    ("The Louvre museum is in PARIS.", LOUVRE),  # another case
    ("It is the louvre's collection in paris.", LOUVRE),  # lower case, a possessive
    ("It was Armstrong's visit to the United States.", LOUVRE),  # a part of a longer name, a possessive
    ("In 1969 Neil Armstrong visited the U.S. for a week.", LOUVRE),  # an abbreviation
    ("In 1969 Armstrong visited the US.", LOUVRE),
    ("It is a Parisian museum, the Louvre.", LOUVRE),  # inflection
    ("Louvre is a museum in Paris.", LOUVRE),  # a sentence's first word is left to the scorer
    ("Paterson died on November 10, 2018.", "Paterson died in 2018, at 78."),  # a month the evidence leaves out
    (
        "It is read from the body mass index (BMI) of the patient.",
        "It is read from the body mass index of the patient.",
    ),
    ("The startup raised US$5 million.", "The startup raised $5 million."),  # the country of the dollar sign
    ("The startup raised 5 million US dollars.", "The startup raised $5 million."),
]
# Names said another way (name parts, countries, abbreviations, words written as one): each rule with a case
# that must pass and a near miss that must still fire.
NAME_FORMS_FIRE = [
    ("John Hancock signed it first.", "Adams signed the declaration; many signed it.", "Neutral", None),
    (
        "The Vikings Education Act was passed in 1953.",
        "Bantu Education Act was passed in 1953. It set up the Department of Bantu Education.",
        "Contradiction",
        "Bantu Education",
    ),  # a sentence's first word before a name's part is a part of the evidence's name
    (
        "Rebecca Bunch sings the songs in Protectorate Ex-Girlfriend.",
        "Title: Crazy Ex-Girlfriend\nThe songs are sung by Rebecca.",
        "Contradiction",
        "Crazy Ex-Girlfriend",
    ),
    ("The show aired in the UK in 1990.", "The show aired in England in 1990.", "Neutral", None),  # a part, not all
    ("He was born in the Neo-Assyrian Empire.", "He was born in Babylon, in the empire.", "Neutral", None),
    ("The TV series aired on CBS.", "The radio series aired on CBS.", "Neutral", None),
]
NAME_FORMS_QUIET = [
    ("Water boils at 100 degrees Celsius.", "Water boils at 100 \u00b0C."),  # a unit's name for its symbol
    ("Store it below 77 degrees Fahrenheit.", "Store it below 77 \u00b0 F."),
    (
        "Rebecca Bunch sings the songs in Crazy Ex-Girlfriend.",
        "Title: Crazy Ex-Girlfriend\nThe songs are usually sung by Rebecca.",
    ),  # the first word of the claim is the name's given part, which the evidence writes as a name
    ("The average weight for men in the U.S. is 200 pounds.", "The typical weight for an American man is 200 pounds."),
    ("The show was a British series.", "The show was a series made in Britain."),  # demonym and country
    ("The Dutch team won the final.", "The team from the Netherlands won the final."),
    (
        "It was decided by the Supreme Court of the United States in 1985.",
        "Decided January 1985, 469 U. S. 325, by the Supreme Court.",
    ),  # initials written with spaces
    ("The TV series aired on CBS.", "It is a television series that aired on CBS."),  # an abbreviation of one word
    (
        "After his conquest of the Neo-Babylonian Empire, he issued the Cyrus Cylinder.",
        "The armies of Cyrus the Great conquered the city of Babylon. Known today as the Cyrus Cylinder, it survives.",
    ),  # a hyphenated name's prefix left aside, its other part a name of the evidence
    ('Annie Zaleski of "The A.V. Club" praised it.', "Source: music.avclub.com. Annie Zaleski praised it."),
    ("In October 2018 she joined India's squad.", "In NZ she joined India's squad in October 2018."),
]
POLARITY_FIRES = [
    # "not because of X" negates the reason ("because" ends a negation's scope only once it holds a word).
    ("He resigned because of the scandal.", "He resigned not because of the scandal but because of his health."),
    ("The delay was because of the weather.", "The delay was not because of the weather."),
    ("The rise in prices has been because of demand.", "The rise in prices has not been because of demand."),
    ("Two of the three bridges opened.", "Two of the three bridges never opened."),  # words that are numbers
    ("The Eiffel Tower is not 330 metres tall.", TOWER),
    ("The Eiffel Tower is never open to visitors.", "The Eiffel Tower is open to visitors every day."),
    ("The Louvre museum is no longer in Paris.", LOUVRE),
    ("The Louvre museum isn't in Paris.", LOUVRE),
    ("The museum is in Paris.", "The museum is not in Paris, it moved to Lens."),
    # A verb that negates: "lacks", "declined to", "failed to", on either side.
    ("The patch has support for Windows.", "The patch lacks support for Windows."),
    ("The minister commented on the report.", "The minister declined to comment on the report."),
    ("The company doubled its dividend.", "The company declined to double its dividend."),
    ("The drug improved survival in the trial.", "The drug failed to improve survival in the trial."),
    ("The drug failed to improve survival in the trial.", "The drug improved survival in the trial."),
    ("The bank failed in 2008.", "The bank did not fail in 2008."),  # "failed" with no "to" is the claim's verb
]
POLARITY_QUIET = [
    ("The disease is not uncommon in children.", "The disease is common in children."),  # double negation
    ("The plan is not only cheap but also fast.", "The plan is cheap and fast."),
    (
        "It is the rapid injection of fluid that causes the quakes.",
        "It is not fracking; it is the rapid injection of fluid that causes the quakes.",
    ),
    ("The museum is not in London.", "The museum is not in London but in Paris."),  # negated on both sides
    ("No doubt the museum is in Paris.", LOUVRE),
    ("The company could not pay its debts.", "The company was unable to pay its debts."),  # "unable" negates
    ("Two of the three bridges never opened.", "Two of the three bridges never opened."),
    ("The museum does not open on Mondays.", "The museum is closed on Mondays."),  # "closed" is "not open"
    # "failed to", "refused to", "declined to" say "did not"; "lacks" says "does not have".
    ("The drug failed to improve survival in the trial.", "The drug did not improve survival in the trial."),
    ("The witness refused to answer the question.", "The witness did not answer the question."),
    ("The board declined to approve the merger.", "The board did not approve the merger."),
    ("The patch does not support Windows.", "The patch lacks support for Windows."),
    # A negation cut short before "because" negates what came before, not the reason.
    ("The launch was delayed by chip shortages.", "Apple planned a June launch but did not because of chip shortages."),
    ("Biden had Covid.", "Biden was expected to attend the summit but did not because he had Covid."),
    (
        "Her name was missing from the register.",
        "She wanted to vote but couldn't because her name was missing from the register.",
    ),
    # "stopped", "quit" before a verb's "-ing" is no plain negation: what stopped went on before.
    ("He stopped taking the drug.", "He stopped taking the drug."),
    ("He smoked for twenty years.", "He smoked for twenty years before he quit smoking."),
    ("The empire existed until 1806.", "The empire ceased to exist in 1806."),
    # "declined to" before a number, a determiner or a level says how far: nothing is negated.
    ("Sales fell to 5% in May.", "Sales declined to 5% in May."),
    ("Sales dropped to the lowest level in May.", "Sales declined to the lowest level in May."),
    ("Unemployment declined to pre-pandemic levels.", "Unemployment fell to pre-pandemic levels."),
    ("Output declined to one-third of its 2019 level.", "Output fell to one-third of its 2019 level."),
    ("Inflation declined to approximately 3% in 2024.", "Inflation fell to approximately 3% in 2024."),
    ("Inflation fell to single digits in 2023.", "Inflation declined to single digits in 2023."),
    ("The rate fell to five percent in 2020.", "The rate declined to five percent in 2020."),
    ("Interest rates fell to zero in March 2020.", "Interest rates declined to zero in March 2020."),
    ("Sales declined to record lows in May 2020.", "Sales fell to record lows in May 2020."),
    ("The population fell to nearly half its size.", "The population declined to nearly half its size."),
]
# A sentence that negates in a verb of its own ("avoid") does not plainly state what the claim negates.
NEGATING_VERB_CASES = [
    ("Do not punish the cat for going outside the box.", "Punishing the cat for going outside the box works.", True),
    (
        "Do not punish the cat for going outside the box.",
        "Punishing the cat for going outside the box makes it worse, so avoid it.",
        False,
    ),
    ("The drug does not prevent the disease.", "The drug prevents the disease.", True),  # the claim's own verb
    ("The plant had not leaked, officials said.", "Officials denied that the plant had leaked.", False),
]
# A claim that negates, against evidence whose sentence stating the claim negates nothing: Neutral.
NEGATION_MISSING_FIRES = [
    (
        "The Education Act was not passed in South Africa in 1953.",
        "The Education Act, a South African law, was enacted in 1953.",
    ),  # the negated verb said another way, the sentence negates nothing
    ("The tax rates will not change next year.", "The tax rates will rise next year."),
    ("The wound is not treated promptly.", "The wound is treated late."),
    ("The cat is not using the box.", "The cat goes outside the box."),
    ("Cars are not allowed in the town centre.", "Cars may enter the urban town centre."),  # "ban" in "urban" is none
    (
        "In 2018 he said that the president hasn't done anything for the town.",
        "In 2018 he said the president was a friend of the town.",
    ),
    (
        "A married man could not then have a lawful marriage under the Customary Act.",
        "Customary marriages are recorded by the state. "
        "A married man may marry under the Customary Act and this will be lawfully recognised.",
    ),
]
NEGATION_MISSING_QUIET = [
    (
        "Tax rates will not change in the next two years.",
        "The current rates will remain in effect for the next two years.",
    ),  # one word for "not change"
    ("The merger is not legal in France.", "The merger is illegal in France."),  # one word for "not legal"
    ("Cars are not allowed in the town centre.", "Cars are banned from the town centre."),
    (
        "Polar bears do not have natural predators except humans.",
        "Adult bears have no natural predators.\n\nPolar bear predators: humans have hunted polar bears.",
    ),  # the sentence holding what the negation bears on negates it, another sentence shares more of the clause
    (
        "The offer was declined as he did not want to leave the band.",
        "He declined the offer to stay with the band.",
    ),  # a negation said in other words: "declined"
    ("The wound can be fatal if it is not treated promptly.", "The wound can be fatal when it is treated late."),
    ("Find out why the cat is not using the box.", "Find out why the cat goes outside the box."),
    (
        'In 2018 he said that the president "hasn\'t done anything" for the town.',
        "In 2018 he said the president was a friend of the town.",
    ),  # someone's words, quoted: not what the claim states
    ("The museum is not open on Mondays.", "Visitors: the bridge is open every day."),  # the evidence states no clause
    (
        "A married man could not then have a lawful marriage under the Customary Act.",
        "Customary marriages are recorded by the state. "
        "A married man cannot marry under the Customary Act as this will not be lawfully recognised.",
    ),  # "lawfully" negated is "lawful" negated: words matched as the scorer matches them
]
ANTONYM_FIRES = [
    ("The museum is open on Mondays.", "The museum is closed on Mondays.", "closed"),
    # "not only" negates nothing (as the polarity guard reads it): "open" stands against "closed".
    ("The museum is not only open on Mondays but also free.", "The museum is closed on Mondays.", "closed"),
    ("The vaccine was banned for children.", "The vaccine was approved for children.", "approved"),
    ("Sales increased in 2020.", "Sales decreased in 2020.", "decreased"),
    ("The team won the final in 2019.", "The team lost the final in 2019.", "lost"),
    ("It was built before the war.", "It was built after the war.", "after"),
    ("All students passed the exam.", "Some students passed the exam.", "Some"),
    ("She was the first woman to win the prize.", "She was the last woman to win the prize.", "last"),
    # A word and its negative prefix: "valid", "invalid".
    ("The contract was invalid under state law.", "The contract was valid under state law.", "valid"),
    ("The witness was reliable, the judge said.", "The witness was unreliable, the judge said.", "unreliable"),
    ("The company was unable to pay its debts.", "The company was able to pay its debts.", "able"),
    ("It is impossible to visit in winter.", "It is possible to visit in winter.", "possible"),
    ("Mars is smaller than Mercury.", "Mars is larger than Mercury.", "larger"),  # the same sides
    (
        "Michael Jordan holds the lowest career scoring average record against many teams, including the Blazers, "
        "Jazz, Suns, Celtics and Hornets.",
        "Jordan has Chamberlain beat with the highest scoring average.\n\nJordan played many teams, including the "
        "Blazers, Jazz, Suns, Celtics and Hornets, and holds a record against them.",
        "highest",
    ),  # an adjective between the word and its noun, in a sentence that holds little of the claim
]
ANTONYM_QUIET = [
    ("Shares were up 5% in May.", "Shares, down 2% in April, rose 5% in May."),
    ("Up to 500 people attended.", "Up to 500 people attended, down from 700."),
    # A negated word says its opposite: the polarity guard reads negations.
    ("Selling the drug is not legal in Canada.", "Selling the drug is illegal in Canada."),
    ("Selling the drug is illegal in Canada.", "Selling the drug is not legal in Canada."),
    ("Some birds cannot fly.", "Not all birds can fly."),  # "not all" is "some ... not"
    # A participle's prefix is no opposite: "little is known" is "largely unknown".
    ("Little is known about his early life.", "His early life is largely unknown."),
    ("The series continued until 2010.", "The series was discontinued in 2010."),
    ("The colony became independent in 1960.", "The colony, long dependent on France, gained independence in 1960."),
    ("It was built before the war.", "It was built before the war and restored after it."),
    ("The heart pumps more blood with fewer beats.", "The heart pumps more blood with fewer beats."),
    ("Sales increased in 2020.", "Sales increased in 2020, while costs decreased."),
    ("Sales increased in 2020.", "The weather was worse in 2020 and costs decreased."),  # another slot
    (
        "Exports increased sharply in 2020 across Europe.",
        "Across Europe in 2020, exports increased; imports from distant Asian markets decreased.",
    ),  # the opposite beside other words, the claim's own word in the evidence
    # The converse: the opposite word with the sides turned round says the same.
    ("Mars is larger than Mercury.", "Mercury is smaller than Mars."),
    ("Bob is younger than Alice.", "Alice is older than Bob."),
    ("The CEO resigned after the board approved the budget.", "The board approved the budget before the CEO resigned."),
    ("Inflation was higher in 2022 than in 2023.", "Inflation was lower in 2023 than in 2022."),
    # The same word, the same sides.
    ("Mars is smaller than Earth.", "Mars is smaller than Earth and Venus."),
    ("The museum opened before the war.", "Before the war, the museum opened."),
    ("Prices were higher than expected.", "Prices were higher than expected, analysts said."),
]
# The same word of a comparison, its sides turned round: a Contradiction quoting the sentence.
TURNED_ROUND = [
    ("Mars is smaller than Mercury.", "Mercury is smaller than Mars."),
    (
        "The CEO resigned before the board approved the budget.",
        "The board approved the budget before the CEO resigned.",
    ),
    ("Inflation was higher in 2023 than in 2022.", "Inflation was higher in 2022 than in 2023."),
]

# A claim stated plainly where every sentence stating it says it only may be so, or only under a condition.
HEDGE_FIRES = [
    # An intention or a tendency is not the act.
    ("IKEA opened its first store in Peru in 2025.", "IKEA plans to open its first store in Peru in 2025."),
    ("Drinking green tea lowers blood pressure.", "People who drink green tea tend to have lower blood pressure."),
    # Said aside, where the rest of the sentence states something else.
    (
        "The airline opened a route to Lima.",
        "The airline, which plans to open a route to Lima next year, reported profits.",
    ),
    ("Heavy coffee drinking prevents diabetes.", "Heavy coffee drinking is linked to a lower risk of diabetes."),
    ("The fossil is the oldest known bird.", "Researchers believe the fossil may be the oldest known bird."),
    ("The storm will make landfall on Thursday.", "The storm could make landfall on Thursday."),
    ("The drug reduces pain, fever and swelling.", "The drug may reduce pain, fever and swelling."),  # over a list
    ("The fire was caused by faulty wiring.", "The fire was most likely caused by faulty wiring."),
    ("The drug cuts deaths by half.", '"The drug may cut deaths by half," Dr Smith said.'),  # the quotation states it
    ("Refunds are available within 30 days.", "Refunds are available within 30 days, if the product is unopened."),
    ("Refunds are available within 30 days.", "Refunds are available within 30 days as long as it is unopened."),
    ("The drug cuts deaths by half.", "Doctors who treated patients said the drug may cut deaths by half."),
    ("The bridge will reopen in June.", "Officials who spoke to reporters said the bridge could reopen in June."),
    ("Smoking causes cancer.", "Smoking, researchers say, may cause cancer."),
    ("Refunds are available within 30 days.", "Refunds are available within 30 days if the product is unopened."),
    ("The tariffs will rise in July.", "Unless parliament ratifies the treaty, the tariffs will rise in July."),
]
HEDGE_QUIET = [
    # "tend to" as care; an intention said aside, in a clause of its own.
    ("The nurse tended the wounded soldiers.", "The nurse tended to the wounded soldiers."),
    ("The flight departed late.", "The flight, which was scheduled to leave at noon, departed late."),
    ("The flight departed at 9 am.", "The flight departed at 9 am, although it was scheduled to depart at 8 am."),
    ("The city built a new park.", "The city, which had planned to build a stadium, built a new park."),
    ("The policy could reduce waiting times.", "The policy may reduce waiting times."),  # hedged alike
    ("Drinking coffee is associated with a lower risk.", "Coffee drinking is linked to a lower risk."),
    ("Users can enable two-factor login.", "Users may enable two-factor login."),  # "can" hedges the claim
    ("The device shuts down when it is above 40 degrees.", "If it is above 40 degrees, the device shuts down."),
    ("The museum is open on Mondays.", "The museum may be open on holidays. The museum is open on Mondays."),
    ("He asked her to stay.", "He asked if she could stay, and she did."),  # a question's "could"
    ("Paris is the capital of France.", "Paris, which may be the most visited city, is the capital of France."),
    ("The drug reduces pain.", "The drug reduces pain, May trials showed."),  # the month
    ("British citizens need no visa.", "British citizens who plan to visit need no visa."),  # a relative clause
    ("The temperature exceeds 40 degrees.", "If the temperature exceeds 40 degrees, the device shuts down."),
    # A hedge of another clause of the sentence, or a word in a sense that hedges nothing.
    ("Acme reported revenue of $4.2 billion.", "Acme reported revenue of $4.2 billion and said it may buy back stock."),
    ("The budget includes $50 million for roads.", "The budget includes $50 million for roads that could open soon."),
    ("The council approved a $1.2 billion budget.", "The council approved the proposed budget of $1.2 billion."),
    ("The phone has a retail price of $499.", "The phone has a suggested retail price of $499."),
    (
        "Symptoms of the disease include fever and cough.",
        "Symptoms associated with the disease include fever and cough.",
    ),
    ("Smokers have twice the risk of heart disease.", "Smokers are twice as likely to get heart disease."),
    ("Researchers found no link between the two.", "Researchers could not find any link between the two."),
    ("Kerala saw record rainfall in 2024.", "May 2024 brought record rainfall to Kerala."),
    # A claim hedged in other words.
    (
        "The fossil is thought to be the oldest known bird.",
        "Researchers believe the fossil may be the oldest known bird.",
    ),
    ("There is a link between coffee and a lower risk.", "Coffee is linked to a lower risk."),
    ("The storm is forecast to make landfall on Thursday.", "The storm could make landfall on Thursday."),
    ("Profits hit $2 billion.", 'The CEO said it was "better than we could have hoped" as profits hit $2 billion.'),
    # A condition of another clause, or "if" as "whether".
    ("The warranty lasts two years.", "The warranty lasts two years, and if you have questions, our team can help."),
    (
        "Side effects include heartburn and nausea.",
        "Side effects include heartburn and nausea, and it may harm the heart if used long.",
    ),
    ("The vaccine was approved in 2021.", "The vaccine was approved in 2021; it is unclear if it protects children."),
    # A narrative "would" tells what came later.
    ("She became CEO in 2010.", "She joined in 1998 and would go on to become CEO in 2010."),
]


# Two parties of the claim the other way round in the sentence that states it (hand-written; none is in
# bench/meaning_review.jsonl, whose role swaps the guard was written against).
ROLE_FIRES = [
    ("Spain imports gas from Algeria.", "Algeria imports gas from Spain."),
    ("The Lakers beat the Celtics 102-99.", "The Celtics beat the Lakers 102-99 on Friday."),
    ("Whole Foods bought Amazon in 2017.", "Amazon bought Whole Foods in 2017 for $13.7 billion."),
    ("The cat chased the dog across the yard.", "The dog chased the cat across the yard."),
    ("Rome declared war on Carthage in 264 BC.", "Carthage declared war on Rome in 264 BC."),
    ("Exports fell while imports rose in May.", "Imports fell while exports rose in May."),
    ("The senator accused the governor of fraud.", "The governor accused the senator of fraud last week."),
    ("The Bank of England lent money to Barings.", "Barings lent money to the Bank of England."),  # a longer party
    ("Shakespeare influenced Marlowe.", "Marlowe influenced Shakespeare."),
    ("Democrats far outnumber Republicans in the city.", "Republicans far outnumber Democrats in the city."),
    ("Hamilton finished an hour ahead of Verstappen.", "Verstappen finished an hour ahead of Hamilton."),
    ("Procter and Gamble bought Gillette.", "Gillette bought Procter and Gamble."),  # "and" inside a party
    # From a second review's real swaps.
    ("Amazon bought Whole Foods in 2017.", "It was Whole Foods that bought Amazon in 2017."),
    ("Haydn taught Beethoven.", "In Vienna Beethoven taught Haydn counterpoint in 1793."),
    ("Tesla supplies batteries to Panasonic.", "Panasonic supplies batteries to Tesla from its Nevada Gigafactory."),
    ("Stir the yogurt slowly into the sauce.", "Stir the sauce slowly into the yogurt so it does not curdle."),
    ("Rome declared war on Carthage.", "Carthage declared war on Rome (264 BC)."),
    # From a held-out set's real swaps: a date moved as well, a title beside a name, a score, fewer words shared.
    (
        "Poland invaded Germany on 1 September 1939.",
        "On 1 September 1939, Germany invaded Poland, prompting Britain and France to declare war two days later.",
    ),
    ("Duncan murders Macbeth in his sleep.", "Urged on by his wife, Macbeth murders King Duncan in his sleep."),
    (
        "Garry Kasparov defeated Deep Blue in their 1997 rematch.",
        "In May 1997, IBM's Deep Blue defeated Garry Kasparov 3\u00bd\u20132\u00bd in their six-game rematch.",
    ),
    ("The Sun orbits the Earth once a year.", "The Earth orbits the Sun once every 365.25 days."),
]
# The same parties in another turn of phrase, a relation that holds both ways, a list, a time moved: quiet.
ROLE_QUIET = [
    ("Oracle acquired Cerner in 2022.", "Cerner was acquired by Oracle in 2022."),  # the passive
    ("Cerner was acquired by Oracle.", "Oracle acquired Cerner."),
    ("Spain borders France.", "France borders Spain."),  # a relation both ways
    ("Anne married Tom in 1990.", "Tom married Anne in 1990."),
    ("Marseille drew with Lyon 1-1.", "Lyon drew with Marseille 1-1."),
    ("Smith and Jones founded the firm.", "Jones and Smith founded the firm."),
    ("Paris, Lyon and Nice hosted games.", "Nice, Lyon and Paris hosted games."),  # a list in another order
    ("Talks between Iran and Iraq resumed.", "Talks between Iraq and Iran resumed."),
    ("Sales rose in March in Europe.", "Sales rose in Europe in March."),  # a time moved
    ("The capital of France is Paris.", "Paris is the capital of France."),  # a copula: the same thing
    ("Oracle acquired Cerner.", "Oracle acquired Cerner in 2022."),  # the same order
    ("Germany lost to Brazil.", "Brazil beat Germany."),  # the converse in other words: not this guard's
    ("Oracle acquired Cerner.", "Cerner makes records software. Oracle acquired it."),  # no sentence states it
    # From a review's 255 true pairs written to trip the guard (its first version turned 93 of them away).
    ("Pep Guardiola coaches Manchester City.", "Manchester City coach Pep Guardiola praised his players."),
    ("Tim Cook heads Apple.", "Apple head Tim Cook spoke at the launch."),  # a title, not the verb
    ("John Smith is older than Mary Jones.", "Mary Jones is younger than John Smith."),  # other words between
    ("Queen Elizabeth II was the mother of King Charles III.", "King Charles III was the son of Queen Elizabeth II."),
    ("Oracle paid more for Cerner than for NetSuite.", "Oracle paid less for NetSuite than for Cerner."),
    ("Prince Rainier wed Grace Kelly in Monaco.", "Grace Kelly wed Prince Rainier in Monaco."),  # both ways
    ("Route 66 intersects Interstate 40 near Flagstaff.", "Interstate 40 intersects Route 66 near Flagstaff."),
    ("Romeo kissed Juliet on the balcony.", "Juliet kissed Romeo on the balcony."),
    ("The pharmacy is next to the post office.", "The post office is next to the pharmacy."),  # a copula
    ("Prince Harry is a cousin of Princess Beatrice.", "Princess Beatrice is a cousin of Prince Harry."),
    ("Tom is as tall as his older brother.", "His older brother is as tall as Tom."),
    ("The fastest man on Earth remains Usain Bolt.", "Usain Bolt remains the fastest man on Earth."),
    ("Mark Twain was actually Samuel Clemens.", "Samuel Clemens was actually Mark Twain."),
    ("The bridge connects Manhattan to Brooklyn.", "The bridge connects Brooklyn to Manhattan."),  # no word between
    ("Symptoms range from mild to severe.", "Symptoms range from severe to mild."),
    ("The road runs from Paris to Lyon via Dijon.", "The road runs from Lyon to Paris via Dijon."),
    ("Smith said the merger was dead.", '"The merger is dead" said Smith.'),  # who said what
    ("Critics say the film is too long.", "The film is too long say critics."),
    ("Inflation rose while unemployment fell.", "Unemployment fell while inflation rose."),  # clauses exchanged
    ("Exports grew whereas imports shrank last year.", "Imports shrank whereas exports grew last year."),
    ("The shop sells bread in addition to cakes.", "The shop sells cakes in addition to bread."),
    ("The firm sells phones as well as laptops.", "The firm sells laptops as well as phones."),
    ("Argentina beat France in 2022.", "France beat Argentina in 2018. Argentina beat France in 2022."),  # another
    (
        "Oracle acquired Cerner.",
        "Early reports wrongly claimed Cerner acquired Oracle. In fact Oracle acquired Cerner.",
    ),
    # From a second review's 209 true pairs (the guard's second version turned 52 of them away).
    ("BRCA1 binds BARD1 through its RING domain.", "In vitro, BARD1 binds BRCA1 through its RING domain (Wu, 1996)."),
    (
        "The A1 crosses the A14 near Huntingdon.",
        "The A14 crosses the A1 near Huntingdon at the Brampton Hut interchange.",
    ),
    (
        "Queen Victoria wedded Prince Albert in 1840.",
        "Prince Albert wedded Queen Victoria in 1840 at the Chapel Royal.",
    ),
    ("Sparta allied Athens against Persia.", "Athens allied Sparta against Persia in 480 BC."),  # inflected
    ("Lyon lies 465 km from Paris.", "Paris lies 465 km from Lyon, about two hours by TGV."),  # a distance
    ("Tom lives across the hall from Anna.", "Anna lives across the hall from Tom in the same building."),
    ("Chelsea held Arsenal to a 1-1 draw.", "Arsenal held Chelsea to a 1-1 draw at the Emirates on Sunday."),
    ("Critics compared Hemingway unfavourably to Faulkner.", "Critics compared Faulkner unfavourably to Hemingway."),
    # Another occasion in the same sentence: another year, or the claim's words in another clause.
    (
        "Federer beat Nadal at Wimbledon in 2007.",
        "Nadal beat Federer at Wimbledon in 2008, a year after losing the 2007 final to him.",
    ),
    ("Exports exceeded imports in 2021.", "Imports exceeded exports in 2020, but the balance reversed in 2021."),
    (
        "Liverpool beat Everton in the FA Cup semi-final.",
        "Everton beat Liverpool in the league in October but lost the FA Cup semi-final to them in April.",
    ),
    # A question, a belief reported to be corrected, a headline's colon or a table's slash.
    (
        "Amazon bought Whole Foods.",
        "It is a popular myth that Whole Foods bought Amazon. Whole Foods was bought by Amazon.",
    ),
    ("Germany beat Brazil 7-1.", "Brazil beat Germany 7-1? Not quite: it was Brazil that lost 7-1 to Germany."),
    ("Oracle acquired Cerner.", "Cerner acquired: Oracle closes $28.3 billion deal"),
    ("Microsoft acquired Activision Blizzard.", "Activision Blizzard / acquired / Microsoft (2023)"),
    ("It is false that Cerner acquired Oracle.", "Oracle acquired Cerner in 2022."),  # the claim denies it
    ("Lyon lies an hour from Paris.", "Paris lies an hour from Lyon."),  # how far apart, in words
    ("The hotel lies 500 m from the station.", "The station lies 500 m from the hotel."),
    ("The farm lies 2 days from the town.", "The town lies 2 days from the farm."),
    ("Tom lives down the street from Anna.", "Anna lives down the street from Tom."),
    ("Tom Lives Across The Hall From Anna.", "Anna Lives Across The Hall From Tom."),  # in title case
    (
        "The euro traded at parity to the dollar in July 2022.",
        "In July 2022 the dollar traded at parity to the euro for the first time in 20 years.",
    ),
    # Real exchanges left alone: no word but "from" and "to" between (a distance or a range reads so), a copula.
    ("The train runs from Leeds to York.", "The train runs from York to Leeds every hour."),
    ("Paris is the capital of France.", "France is the capital of Paris."),
]


@pytest.mark.parametrize(("claim", "evidence"), ROLE_FIRES)
def test_role_guard_fires(claim: str, evidence: str) -> None:
    """Parties exchanged: a Contradiction quoting the source's sentence, checked by the checker too."""
    found = role_guard(claim, evidence)
    assert found is not None
    assert (found.guard, found.label, found.source_value) == ("role", "Contradiction", evidence)
    assert found.reason == f'the sources have them the other way round: "{evidence}"'
    assert ScorerClaimChecker().check(Claim(text=claim), [evidence]).label == "Contradiction"


def test_role_guard_names_the_parties_as_the_claim_writes_them() -> None:
    """The finding's claim value is the claim's words from the one party to the other, its citation markers out."""
    found = role_guard("Whole Foods[1](id=2) bought Amazon[2](id=3) in 2017.", "Amazon bought Whole Foods in 2017.")
    assert found is not None
    assert found.claim_value == "Whole Foods bought Amazon"


@pytest.mark.parametrize(("claim", "evidence"), ROLE_QUIET)
def test_role_guard_near_misses(claim: str, evidence: str) -> None:
    """The passive, a relation that holds both ways, a list, clauses or a time in another order: quiet."""
    assert role_guard(claim, evidence) is None


@pytest.mark.parametrize(("claim", "evidence"), HEDGE_FIRES)
def test_hedge_guard_fires(claim: str, evidence: str) -> None:
    """A hedge or a condition the claim drops: Neutral, quoting the sentence that hedges it."""
    found = hedge_guard(claim, evidence)
    assert found is not None
    assert (found.guard, found.label, found.source_value) == ("hedge", "Neutral", evidence)
    assert found.reason in (
        f'the sources say it only may be so: "{evidence}"',
        f'the sources say it only under a condition: "{evidence}"',
    )


@pytest.mark.parametrize(("claim", "evidence"), HEDGE_QUIET)
def test_hedge_guard_near_misses(claim: str, evidence: str) -> None:
    """A claim hedged alike, a sentence stating it plainly, a hedge of another clause, a question or a month: quiet."""
    assert hedge_guard(claim, evidence) is None


@pytest.mark.parametrize(("claim", "evidence", "label", "value"), NUMBER_FIRES)
def test_number_guard_fires(claim: str, evidence: str, label: str, value: str | None) -> None:
    """A changed number is a Contradiction naming the source's value; a missing one is Neutral."""
    found = number_guard(claim, evidence)
    assert found is not None
    assert (found.guard, found.label, found.source_value) == ("number", label, value)


@pytest.mark.parametrize(("claim", "evidence"), NUMBER_QUIET)
def test_number_guard_near_misses(claim: str, evidence: str) -> None:
    """A number restated in words, with separators, units or a bound allowed for, passes."""
    assert number_guard(claim, evidence) is None


@pytest.mark.parametrize(("claim", "evidence", "label", "value"), NAME_FIRES)
def test_name_guard_fires(claim: str, evidence: str, label: str, value: str | None) -> None:
    """A name the evidence lacks is Neutral; another name in its slot is a Contradiction."""
    found = name_guard(claim, evidence)
    assert found is not None
    assert (found.guard, found.label, found.source_value) == ("name", label, value)


@pytest.mark.parametrize(("claim", "evidence"), NAME_QUIET)
def test_name_guard_near_misses(claim: str, evidence: str) -> None:
    """Case, possessives, name parts, abbreviations and inflections find the name."""
    assert name_guard(claim, evidence) is None


@pytest.mark.parametrize(("claim", "evidence", "label", "value"), NAME_FORMS_FIRE)
def test_name_guard_fires_past_other_forms(claim: str, evidence: str, label: str, value: str | None) -> None:
    """A name's other forms do not excuse a part, a country or a word the evidence does not have as a name."""
    found = name_guard(claim, evidence)
    assert found is not None
    assert (found.guard, found.label, found.source_value) == ("name", label, value)


@pytest.mark.parametrize(("claim", "evidence"), NAME_FORMS_QUIET)
def test_name_guard_finds_other_forms(claim: str, evidence: str) -> None:
    """Given names, demonyms, spaced initials, one-word abbreviations, prefixes and joined words find the name."""
    assert name_guard(claim, evidence) is None


@pytest.mark.parametrize(("claim", "evidence"), POLARITY_FIRES)
def test_polarity_guard_fires(claim: str, evidence: str) -> None:
    """A negation added or dropped ("not", "never", "no longer", "n't") is a Contradiction."""
    found = polarity_guard(claim, evidence)
    assert found is not None
    assert (found.guard, found.label) == ("polarity", "Contradiction")


@pytest.mark.parametrize(("claim", "evidence"), POLARITY_QUIET)
def test_polarity_guard_near_misses(claim: str, evidence: str) -> None:
    """Double negation, "not only", a negation of another clause and "no doubt" change nothing."""
    assert polarity_guard(claim, evidence) is None


@pytest.mark.parametrize(("claim", "evidence", "contradicts"), NEGATING_VERB_CASES)
def test_polarity_contradiction_needs_a_plain_statement(claim: str, evidence: str, contradicts: bool) -> None:
    """A negated claim is contradicted by a sentence stating it, not by one that negates it with "avoid"."""
    found = polarity_guard(claim, evidence)
    assert (found is not None and found.label == "Contradiction") is contradicts


@pytest.mark.parametrize(("claim", "evidence"), NEGATION_MISSING_FIRES)
def test_polarity_guard_finds_a_negation_the_sources_lack(claim: str, evidence: str) -> None:
    """A negated claim whose stating sentence of the evidence negates nothing is Neutral, naming the negated words."""
    found = polarity_guard(claim, evidence)
    assert found is not None
    assert (found.guard, found.label, found.source_value) == ("polarity", "Neutral", None)


@pytest.mark.parametrize(("claim", "evidence"), NEGATION_MISSING_QUIET)
def test_polarity_guard_accepts_a_negation_said_another_way(claim: str, evidence: str) -> None:
    """A negation in other words, in one word, in a condition, question or quotation, or about nothing stated: quiet."""
    assert polarity_guard(claim, evidence) is None


@pytest.mark.parametrize(("claim", "evidence", "value"), ANTONYM_FIRES)
def test_antonym_guard_fires(claim: str, evidence: str, value: str) -> None:
    """The opposite word in the claim word's place is a Contradiction naming it."""
    found = antonym_guard(claim, evidence)
    assert found is not None
    assert (found.guard, found.label, found.source_value) == ("antonym", "Contradiction", value)


@pytest.mark.parametrize(("claim", "evidence"), TURNED_ROUND)
def test_antonym_guard_finds_a_comparison_turned_round(claim: str, evidence: str) -> None:
    """ "A is smaller than B" against "B is smaller than A": a Contradiction quoting the source's sentence."""
    found = antonym_guard(claim, evidence)
    assert found is not None
    assert (found.guard, found.label, found.source_value) == ("antonym", "Contradiction", evidence)
    assert found.reason == f'the sources compare them the other way round: "{evidence}"'


@pytest.mark.parametrize(("claim", "evidence"), ANTONYM_QUIET)
def test_antonym_guard_near_misses(claim: str, evidence: str) -> None:
    """The claim's own word present, both words in the claim, or the opposite in another slot: quiet."""
    assert antonym_guard(claim, evidence) is None


# Claims the guards' shortcuts (reading a claim's tokens only when a cheap test says so) must still read.
SHORTCUT_CASES = [
    ("The prize went to \u00d6lkers in 2001.", "The prize went to Smith in 2001.", "name"),  # a non-ASCII capital
    ("NASA launched the probe.", "The agency launched the probe.", "name"),  # capitals opening a sentence
    ("The museum, Mus\u00e9e d'Orsay, is in Paris.", "The museum is in Paris.", "name"),
    ("It is the fourth-strongest team in the league.", "It is the fourth-weakest team in the league.", "antonym"),
    ("The museum is in Paris.", "The museum is not in Paris, it moved to Lens.", "polarity"),  # the evidence negates
    ("The team won the final.", "The team lost the final.", "antonym"),
]


@pytest.mark.parametrize(("claim", "evidence", "guard"), SHORTCUT_CASES)
def test_shortcuts_miss_nothing(claim: str, evidence: str, guard: str) -> None:
    """A name in non-ASCII or all capitals, a hyphenated listed word, the evidence's own negation: each still fires."""
    found = MeaningGuards().check(claim, evidence)
    assert found is not None
    assert found.guard == guard


def test_reasons_say_what_the_source_says() -> None:
    """The reason is one line naming the source's value."""
    assert number_guard("The tower is 450 metres tall.", TOWER).reason == "the sources say 330 metres, not 450 metres"  # type: ignore[union-attr]
    assert name_guard("The Louvre museum is in London.", LOUVRE).reason == "the sources say Paris, not London"  # type: ignore[union-attr]
    assert number_guard("It has 12 bridges.", TOWER).reason == "the sources do not state 12 bridges"  # type: ignore[union-attr]


@pytest.mark.parametrize("guard", ["number", "name", "polarity", "antonym", "role"])
def test_each_guard_has_a_switch(guard: str) -> None:
    """Turning one guard off lets its claim through; the others still run."""
    claims = {
        "number": ("The Eiffel Tower is 450 metres tall.", TOWER),
        "name": ("The Louvre museum is in London.", LOUVRE),
        "polarity": ("The Eiffel Tower is not 330 metres tall.", TOWER),
        "antonym": ("Sales increased in 2020.", "Sales decreased in 2020."),
        "role": ("Whole Foods bought Amazon.", "Amazon bought Whole Foods."),
    }
    claim, evidence = claims[guard]
    assert MeaningGuards().check(claim, evidence).guard == guard  # type: ignore[union-attr]
    assert MeaningGuards(**{guard: False}).check(claim, evidence) is None
    assert MeaningGuards.off().check(claim, evidence) is None


# ---- every offline path ----

ISSUE_CASES = [
    ("The Louvre museum is in London.", "Contradiction", "name"),
    ("The Eiffel Tower is 450 metres tall.", "Contradiction", "number"),
    ("The Eiffel Tower is not 330 metres tall.", "Contradiction", "polarity"),
]
ISSUE_SOURCES = ["The Eiffel Tower, in Paris, is 330 metres tall.", "The Louvre museum is in Paris."]


@pytest.mark.parametrize(("claim", "label", "guard"), ISSUE_CASES)
def test_checker_labels_and_explains(claim: str, label: str, guard: str) -> None:
    """The issue's three claims are not Entailment for the check command's checker, and say why."""
    check = ScorerClaimChecker().check(Claim(text=claim), ISSUE_SOURCES)
    assert (check.label, check.guard.guard if check.guard else None) == (label, guard)
    assert check.to_dict(guard=True)["guard"]["name"] == guard
    assert "guard" not in check.to_dict()  # the check command's columns stay as they were
    # The first evidence span is the source sentence the guard read: inside the right source.
    span = check.evidence[0]
    assert "Paris" in ISSUE_SOURCES[span.reference][span.start : span.end]


# (source, claim, supported): numbers written another way are the same number; a changed one is not.
NUMBERS_WRITTEN_OTHERWISE = [
    # Compound numbers in words ("two hundred and twenty-five" is 225, never 200 and 25).
    ("The year has three hundred and sixty-five days.", "The year has 365 days.", True),
    ("It reached a height of one hundred and twenty-five kilometres.", "It reached a height of 125 kilometres.", True),
    ("It reached a height of 125 kilometres.", "It reached a height of one hundred twenty-five kilometres.", True),
    ("It reached a height of two hundred and twenty-five kilometres.", "It reached a height of 25 kilometres.", False),
    ("It reached a height of two hundred and twenty-five kilometres.", "It reached a height of 200 kilometres.", False),
    ("The stadium has twenty-five thousand seats.", "The stadium has 25,000 seats.", True),
    ("The temple is 2,500 years old.", "The temple is two thousand five hundred years old.", True),
    # Shares of a scale.
    ("The city has 500,000 residents.", "The city has half a million residents.", True),
    ("The city has 250,000 residents.", "The city has a quarter of a million residents.", True),
    ("The city has half a million residents.", "The city has a million residents.", False),
    ("The city has a quarter million residents.", "The city has a million residents.", False),
    # Thousands set apart by no-break or thin spaces, or plain ones before a last "000"; other plain spaces set none
    # apart (two tablets of 250 mg).
    ("The organisation has 25,000 members.", "The organisation has 25\u202f000 members.", True),
    ("The organisation has 25\u00a0000 members.", "The organisation has 25,000 members.", True),
    ("The organisation has one million members.", "The organisation has 1\u202f000\u202f000 members.", True),
    ("The organisation has 25\u00a0000 members.", "The organisation has 26\u00a0000 members.", False),
    ("The organisation has 25,000 members.", "The organisation has 25 000 members.", True),
    ("The organisation has one million members.", "The organisation has 1 000 000 members.", True),
    ("Take two 250 mg tablets daily.", "Take 2 250 mg tablets daily.", True),
    ("Take 2 250 mg tablets daily.", "The dose is 2250 mg.", False),
    # Thousands set apart by dots (a decimal comma after them).
    ("The company sold 1.500.000 units.", "The company sold 2.500.000 units.", False),
    ("The company sold 1.500.000 units.", "The company sold 1.5 million units.", True),
    ("The tower is 1.234,5 metres long.", "The tower is 1,234.5 metres long.", True),
    # Units and scales written onto the number.
    ("The tablet contains 200mg of ibuprofen.", "The tablet contains 200 mg of ibuprofen.", True),
    ("The race is 10km long.", "The race is 10 km long.", True),
    ("The race is 10km long.", "The race is 12 km long.", False),
    ("Revenue was $3,500,000.", "Revenue was $3.5M.", True),
    ("Revenue was $3.5 million.", "Revenue was $3.5M.", True),
    ("The model has 7B parameters.", "The model has 7 billion parameters.", True),
    ("The prize was $5M.", "The prize was $5k.", False),
    # Ranks: in words or digits alike, and no count.
    ("He came third in the race.", "He came 3rd in the race.", True),
    ("The event was on May 22nd.", "The event was on 22 May.", True),
    (
        "The 3rd edition of the textbook was published in 2010.",
        "3 editions of the textbook were published in 2010.",
        False,
    ),
    (
        "The 2nd largest city in the country has a busy port.",
        "The 2 largest cities in the country have a busy port.",
        False,
    ),
    # A number that names one (a chapter, a school year) counts nothing: a rank backs it.
    ("The 3rd chapter discusses trade.", "Chapter 3 discusses trade.", True),
    ("The third chapter discusses trade.", "Chapter 3 discusses trade.", True),
    ("Pupils in the 3rd year learn Latin.", "Year 3 pupils learn Latin.", True),
]


@pytest.mark.parametrize(("source", "claim", "supported"), NUMBERS_WRITTEN_OTHERWISE)
def test_checker_reads_a_number_however_it_is_written(source: str, claim: str, supported: bool) -> None:
    """A number in words, with a share of a scale, spaced thousands, a unit or scale written onto it, or a rank
    in words is the number in digits: supported when the same, not when changed."""
    check = ScorerClaimChecker().check(Claim(text=claim), [source])
    assert (check.label == "Entailment") == supported, (check.label, check.score, check.guard)


def test_a_changed_number_is_found_among_a_thousand() -> None:
    """A claim of two thousand numbers, one changed: that one is named (each is looked up, not compared with all)."""
    items = [f"item {i} costs {i * 7} euros" for i in range(1, 1001)]
    claim = "The list says " + ", ".join(items) + "."
    source = "The list says " + ", ".join([*items[:-1], "item 1000 costs 99999 euros"]) + "."
    found = number_guard(claim, source)
    assert found is not None
    assert (found.label, found.claim_value, found.source_value) == ("Contradiction", "7000 euros", "99999 euros")


def test_checker_keeps_supported_claims_and_can_turn_guards_off() -> None:
    """Restated claims stay Entailment with no guard; guards=None gives the score alone."""
    checker = ScorerClaimChecker()
    supported = checker.check(Claim(text="The Louvre museum is in Paris."), ISSUE_SOURCES)
    assert (supported.label, supported.guard) == ("Entailment", None)
    assert supported.to_dict(guard=True)["guard"] is None
    unguarded = ScorerClaimChecker(guards=None).check(Claim(text="The Louvre museum is in London."), ISSUE_SOURCES)
    assert unguarded.label == "Entailment"


def one_citation(text: str) -> AnswerReferences:
    """An answer with one citation of ``text`` naming document 1."""
    citation = Citation(
        number=1, document_positions=(1,), start=0, end=3, text_start=0, text_end=0, text=text, marker="[1]"
    )
    return AnswerReferences(
        references=(Reference(number=1, source="a", title=None, document_positions=(1,)),), citations=(citation,)
    )


@pytest.mark.parametrize(("claim", "label", "guard"), ISSUE_CASES)
def test_verify_citations_withholds_support(claim: str, label: str, guard: str) -> None:
    """verify_citations calls the edited claims unsupported; citation_findings says which guard and why."""
    documents = [Document(" ".join(ISSUE_SOURCES))]
    scorer = LexicalScorer()
    unguarded = verify_citations(one_citation(claim), documents, scorer, guards=None).citations[0]
    checked = verify_citations(one_citation(claim), documents, scorer).citations[0]
    assert checked.supported is False
    if guard != "number":  # the lexical score alone already discounts a missing number
        assert unguarded.supported is True
        assert checked.support == pytest.approx(unguarded.support * 0.95, abs=1e-6)  # type: ignore[operator]
    found = citation_findings(one_citation(claim), documents)[0]
    assert found is not None
    assert (found.guard, found.label) == (guard, label)


def test_verify_citations_keeps_restatements() -> None:
    """A claim that restates its source (number in words, another case) stays supported."""
    documents = [Document(" ".join(ISSUE_SOURCES))]
    for claim in ["The Eiffel Tower is three hundred and thirty metres tall.", "The louvre museum is in PARIS."]:
        assert verify_citations(one_citation(claim), documents, LexicalScorer()).citations[0].supported is True


def test_manage_references_verifier_applies_the_guards() -> None:
    """manage_references(verifier=LexicalScorer()) flags the swapped name; guards=None on the scorer does not."""
    answer = "The Louvre museum is in London[1](id=1)."
    documents = [Document(ISSUE_SOURCES[1], metadata={"source": "louvre.html"})]

    def supported(scorer: LexicalScorer) -> bool | None:
        collector = ReferencesCollector()
        chain = manage_references(str_chunks([answer]), style=TextReferenceStyle(), verifier=scorer)
        chain.invoke({"documents": documents}, {"callbacks": [collector]})
        return collector.answers[0].citations[0].supported

    unguarded = LexicalScorer()
    unguarded.guards = None
    assert supported(LexicalScorer()) is False
    assert supported(unguarded) is True


def test_predictor_labels_a_changed_value_not_grounded() -> None:
    """The predictor's label drops to not_grounded with the guard and reason; restatements stay grounded."""
    documents = [Document(" ".join(ISSUE_SOURCES), id="d1")]
    predictor = ReferencePredictor()
    wrong = predictor.predict("The Eiffel Tower is 450 metres tall.", documents)[0]
    right = predictor.predict("The Eiffel Tower is 330 metres tall.", documents)[0]
    assert (wrong.label, wrong.guard, wrong.reason) == (
        "not_grounded",
        "number",
        "the sources say 330 metres, not 450 metres",
    )
    assert (right.label, right.guard) == ("grounded", None)
    assert ReferencePredictor(guards=None).predict("The Eiffel Tower is 450 metres tall.", documents)[0].label != (
        "not_grounded"
    )


def test_checker_span_stays_inside_its_source() -> None:
    """The source sentence a guard read is located in its own reference, never running into the next one."""
    references = ["The bridge opened in 1932.", "The bridge is 503 metres long. It carries eight lanes."]
    check = ScorerClaimChecker().check(Claim(text="The bridge opened in 1951."), references)
    span = check.evidence[0]
    assert (check.label, span.reference, span.start, span.end) == ("Contradiction", 0, 0, 26)
    carried = ScorerClaimChecker().check(Claim(text="The bridge carries twelve lanes."), references)
    assert carried.guard is not None
    assert carried.guard.reason == "the sources say eight lanes, not twelve lanes"
    located = carried.evidence[0]
    assert references[located.reference][located.start : located.end] == "It carries eight lanes."


def test_checking_page_api_gives_each_claim_its_reason() -> None:
    """POST /api/check gives each claim its guard (or null); the check command writes the same in each check."""
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from langchain_refs.apps.check.items import build_checkers, check_item
    from langchain_refs.apps.check.page import check_routes

    item = {"response": "The Louvre museum is in London. The Louvre museum is in Paris.", "reference": ISSUE_SOURCES}
    answer = TestClient(Starlette(routes=check_routes())).post("/api/check", json=item).json()
    assert answer["ys"] == ["Contradiction", "Entailment"]
    assert answer["guards"] == [
        {
            "name": "name",
            "reason": "the sources say Paris, not London",
            "claim_value": "London",
            "source_value": "Paris",
        },
        None,
    ]
    command = check_item(item, checkers=build_checkers())
    assert [c["guard"] for c in command["checks"]] == answer["guards"]


def test_verified_citation_carries_the_guards_reason_in_its_data() -> None:
    """verify_citations and manage_references(verifier=...) give an unsupported citation its reason as data."""
    from langchain_core.messages import AIMessage
    from langchain_core.runnables import RunnableLambda

    from langchain_refs import TextReferenceStyle, manage_references
    from langchain_refs.grounding import LexicalScorer

    tower = [
        Document("The Eiffel Tower in Paris is 330 metres tall and was finished in 1889.", metadata={"source": "t"})
    ]
    claim = "The Eiffel Tower in Paris is 450 metres tall and was finished in 1889"
    answer = RunnableLambda(lambda _: AIMessage(f"{claim}[1](id=1)."))
    chain = manage_references(answer, style=TextReferenceStyle(), verifier=LexicalScorer())
    message = chain.invoke({"documents": tower})
    (citation,) = message.response_metadata["references"]["citations"]
    assert citation["supported"] is False
    assert citation["unsupported_reason"] == "the sources say 330 metres, not 450 metres"


@pytest.mark.parametrize(
    ("claim", "evidence"),
    [
        ("The cat is not asleep.", "Dogs bark loudly. We concatenate the strings."),  # "cat" in "concatenate"
        ("Lyon has silk.", "Rome is old. Lyon has silk. Lyon has silk too."),
        ("Zebras gallop.", "Rome is old. Paris is big."),
        ("Silk of Lyon is fine.", "Lyon is in France. Silk comes from Lyon."),
    ],
)
def test_best_sentence_is_the_one_sharing_most_words_the_first_on_a_tie(claim: str, evidence: str) -> None:
    """The sentence the polarity and antonym guards read: the most shared content words, the earliest on a tie."""
    from langchain_refs.grounding._guards import _best_sentence, _piece
    from langchain_refs.text import content_words, split_sentences

    said = _piece(claim, 0)
    shared = [len(set(content_words(s.text)) & said.words) for s in split_sentences(evidence)]
    expected = split_sentences(evidence)[shared.index(max(shared))]
    found = _best_sentence(said, evidence)
    assert found is not None
    assert (found[0].start, found[0].end) == (expected.start, expected.end)
